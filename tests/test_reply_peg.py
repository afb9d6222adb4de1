"""The PEG engine: llama.cpp's parse semantics, and resumable parsing that agrees with a fresh parse of
every prefix (memoized results never go stale as text is appended)."""

from __future__ import annotations

import random

import pytest

import reply
from reply.chat import ChatBuilder, Mapper
from reply.growth import parsers_by_id, stall
from reply.peg import Arena, Context, Status
from tests.reply_support import SYNTAX_TEMPLATES, replies, session

FRAGMENTS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "\n", " ", '{"name": "get_weather", ',
             '"arguments": {"city": "Rio", "days": 4}}', "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
             "get_weather", "city", "Rio", "4", "<function=get_weather>", "<parameter=city>", "</parameter>",
             "</function>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "```json", "```",
             '"', "\\", "[1, 2", "}", "{", "x", "hello"]


def reading(arena: Arena, ctx: Context) -> tuple:
    """Status, end and mapped message of a parse of the context."""
    result = arena.parse(ctx)
    mapped = Mapper(ctx.text).run(result.nodes)
    calls = tuple((c.name, c.arguments) for c in mapped.calls)
    return result.status, result.end, "".join(mapped.reasoning), "".join(mapped.content), calls


@pytest.mark.parametrize("template", [names[0] for names in SYNTAX_TEMPLATES.values()])
def test_resumable_parse_equals_fresh_parse_of_every_prefix(template: str) -> None:
    """Random replies built from markers, fed one character at a time."""
    rng = random.Random(template)
    s = session(template, "think/parallel")
    reader = reply.open(s)
    texts = [t for t, _ in replies(s)][12:24] + ["".join(rng.choice(FRAGMENTS) for _ in range(10)) for _ in range(10)]
    for text in texts:
        ctx = Context(reader.prefix, resumable=True)
        for char in text:
            ctx.text += char
            assert reading(reader.arena, ctx) == reading(reader.arena, Context(ctx.text)), repr(ctx.text)


def build(make) -> Arena:
    """An arena from a builder function."""
    b = ChatBuilder()
    return Arena(make(b))


def test_lenient_literal_needs_more_at_the_end_and_fails_on_a_mismatch() -> None:
    """A literal cut by the end of input needs more input; a different character fails it."""
    arena = build(lambda b: b.lit("<tool_call>"))
    assert arena.parse(Context("<tool")).status is Status.NEED_MORE
    assert arena.parse(Context("<tx")).status is Status.FAIL
    assert arena.parse(Context("<tool", lenient=False)).status is Status.FAIL


def test_until_stops_before_a_delimiter_cut_by_the_end() -> None:
    """until() stops before a complete delimiter, and before a partial one at the end of input."""
    arena = build(lambda b: b.content(b.until("</think>")))
    assert arena.parse(Context("abc</thi")).end == 3
    assert arena.parse(Context("abc</think>x")).end == 3
    assert arena.parse(Context("abc</x")).status is Status.NEED_MORE


def test_json_number_waits_for_its_end() -> None:
    """A number at the end of input is not committed: more digits may follow."""
    arena = build(lambda b: b.json())
    assert arena.parse(Context("12")).status is Status.NEED_MORE
    assert arena.parse(Context("12 ")).status is Status.SUCCESS


@pytest.mark.parametrize(("number", "cut"), [("4.", True), ("4.e1", False), ("4e", True), ("4E+", True),
                                             ("-", True)])
def test_a_fraction_or_an_exponent_needs_a_digit(number: str, cut: bool) -> None:
    """json-number and a JSON value refuse a point or an exponent without digits, and wait where the input ends
    right after them."""
    for arena in (build(lambda b: b.json()), build(lambda b: b.json_number())):
        assert arena.parse(Context(number + " ")).status is Status.FAIL
        waits = arena.parse(Context(number, lenient=True)).status is Status.NEED_MORE
        assert waits is cut
    assert build(lambda b: b.json()).parse(Context(f"[{number}]")).status is Status.FAIL


def test_optspace_makes_surrounding_whitespace_optional() -> None:
    """'\\n</think>\\n\\n' matches with or without its newlines."""
    arena = build(lambda b: b.seq(b.optspace("\n</think>\n\n"), b.end()))
    for text in ("</think>", "\n</think>", "</think>\n\n", "\n</think>\n"):
        assert arena.parse(Context(text)).status is Status.SUCCESS, text


def frontier_of(arena: Arena, text: str) -> list[str]:
    """The kinds of the runs of a resumable parse of `text` that looked at the end of the input."""
    ctx = Context(text, resumable=True)
    ctx.frontier = []
    arena.parse(ctx)
    parsers = parsers_by_id(arena.root)
    return [parsers[pid].__class__.__name__ for pid, _, _ in ctx.frontier]


def test_a_mismatch_before_the_end_never_waits_on_more_input() -> None:
    """A literal that already differs from the text is final, so it is memoized (it stays off the frontier of
    runs that looked at the end); one the input ends inside is not, nor a scan stopped before it."""
    arena = build(lambda b: b.seq(b.content(b.until("<tool_call>")), b.choice("<|x|>", "<tool_call>")))
    assert frontier_of(arena, "ab<tool") == ["Until", "Tag", "Literal", "Choice", "Sequence"]


def test_a_stall_holds_while_its_literal_arrives_and_its_waiting_scans_still_stop() -> None:
    """A parse that ends inside a literal, with content stopped before the delimiter the input ends inside,
    reads on unchanged as long as both stay so; another character (another alternative, a broken
    delimiter) ends the stall."""
    arena = build(lambda b: b.seq(b.content(b.until("<ab")), b.choice("<abc>", "<abd>")))
    ctx = Context("hi <a", resumable=True)
    ctx.frontier = []
    found = stall(parsers_by_id(arena.root), ctx, arena.parse(ctx))
    assert found is not None and found.literal == "<abc>" and found.waits == ((3, ("<ab",)),)
    assert found.holds("hi <ab", "b") and found.holds("hi <abc", "c")
    assert not found.holds("hi <abd", "d") and not found.holds("hi <abc>", ">")


def test_no_stall_where_two_runs_wait_on_the_end() -> None:
    """A parse waiting on a run of characters that may go on and on a literal that may start is a stall of
    the run (the literal waits at the end); a parse ending inside a repeat that reached the end is none."""
    words = build(lambda b: b.seq(b.chars(str.isalpha, 1, -1), ":"))
    ctx = Context("city", resumable=True)
    ctx.frontier = []
    found = stall(parsers_by_id(words.root), ctx, words.parse(ctx))
    assert found is not None and found.holds("cityx", "x") and not found.holds("city:", ":")
    repeated = build(lambda b: b.seq(b.zero_or_more(b.lit("ab")), "<end>"))
    ctx = Context("abab", resumable=True)
    ctx.frontier = []
    assert stall(parsers_by_id(repeated.root), ctx, repeated.parse(ctx)) is None
    ctx = Context("abab<e", resumable=True)
    ctx.frontier = []
    assert stall(parsers_by_id(repeated.root), ctx, repeated.parse(ctx)) is not None
