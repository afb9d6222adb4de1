"""The PEG engine: llama.cpp's parse semantics, and resumable parsing that agrees with a fresh parse of
every prefix (memoized results never go stale as text is appended)."""

from __future__ import annotations

import random

import pytest

import reply
from reply.chat import ChatBuilder, Mapper
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


def test_optspace_makes_surrounding_whitespace_optional() -> None:
    """'\\n</think>\\n\\n' matches with or without its newlines."""
    arena = build(lambda b: b.seq(b.optspace("\n</think>\n\n"), b.end()))
    for text in ("</think>", "\n</think>", "</think>\n\n", "\n</think>\n"):
        assert arena.parse(Context(text)).status is Status.SUCCESS, text
