"""Deep nesting: the JSON rules read iteratively (any depth, same reading as llama.cpp's recursive rules),
and nothing nested raises anything but Rejected."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reply
from reply import json_value
from reply.peg import Arena, Builder, Context, Parser
from tests.reply_support import session

DEPTH = 100_000
NESTED = "[" * DEPTH + "]" * DEPTH
DEEP_CALLS = {
    "Qwen-Qwen3-0.6B.jinja": '<tool_call>\n{"name": "get_weather", "arguments": {"city": NESTED}}\n</tool_call>',
    "mistralai-Mistral-Nemo-Instruct-2407.jinja":
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": NESTED}, "id": "abcdefghi"}]',
    "openai-gpt-oss-120b.jinja": '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": NESTED}',
}


@pytest.mark.parametrize("template", sorted(DEEP_CALLS))
def test_arguments_nested_100000_deep_are_read_whole_and_streamed(template: str) -> None:
    """A call whose arguments nest 100,000 deep reads whole and streamed, with its arguments intact."""
    reader = reply.open(session(template, "think/auto"))
    text = DEEP_CALLS[template].replace("NESTED", NESTED)
    expected = '{"city": NESTED}'.replace("NESTED", NESTED)
    assert [call.arguments for call in reader.parse(text).tool_calls] == [expected]
    stream = reader.stream()
    shown = reply.Message()
    for start in range(0, len(text), 4099):
        snapshot = stream.feed(text[start:start + 4099])
        assert len(snapshot.tool_calls) >= len(shown.tool_calls)
        shown = snapshot
    assert [call.arguments for call in stream.finish().tool_calls] == [expected]


def test_a_grammar_recursing_too_deep_is_refused_not_crashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A RecursionError inside a read (a recursive rule of some syntax) becomes Rejected; a stream refuses
    that feed, every later one and its finish. (The feed opens a call: text that only lengthens open content
    is read without running the grammar.)"""
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", "nothink/auto"))
    stream = reader.stream()
    assert stream.feed("Hello").content == "Hello"

    def recurse(ctx: Context) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(reader.arena, "parse", recurse)
    with pytest.raises(reply.Rejected, match="nests deeper"):
        reader.parse("Hello there")
    with pytest.raises(reply.Rejected, match="nests deeper"):
        stream.feed(" <tool_call>")
    monkeypatch.undo()
    with pytest.raises(reply.Rejected, match="nests deeper"):
        stream.feed("!")
    with pytest.raises(reply.Rejected, match="nests deeper"):
        stream.finish()


def recursive_json_rules() -> dict[str, Parser]:
    """llama.cpp's JSON rules as recursive PEG rules (common/peg-parser.cpp), the reference for the scanner."""
    b = Builder()
    ws = b.space()
    rules: dict[str, Parser] = {}

    def value() -> Parser:
        return b.rule("json-value", make_value)

    def string() -> Parser:
        return b.rule("json-string", lambda: b.seq('"', b.string_content('"'), '"'))

    def make_value() -> Parser:
        member = b.seq(string(), ws, ":", ws, value())
        members = b.seq(member, b.zero_or_more(b.seq(ws, ",", ws, member)))
        rules["object"] = b.rule("json-object", lambda: b.seq("{", ws, b.choice("}", b.seq(members, ws, "}"))))
        elements = b.seq(value(), b.zero_or_more(b.seq(ws, ",", ws, value())))
        rules["array"] = b.rule("json-array", lambda: b.seq("[", ws, b.choice("]", b.seq(elements, ws, "]"))))
        rules["bool"] = b.rule("json-bool", lambda: b.choice("true", "false"))
        rules["null"] = b.rule("json-null", lambda: b.lit("null"))
        return b.choice(rules["object"], rules["array"], string(), b.json_number(), rules["bool"],
                        rules["null"])

    rules["value"] = value()
    return rules


RULES = recursive_json_rules()
ARENA = Arena(RULES["value"])
PIECES = ['{', '}', '[', ']', '"', ':', ',', ' ', '\n', '\v', 'a', '\\', 'u', '0', '1', '9', '-', '.', 'e', 'E', '+',
          't', 'true', 'false', 'null', 'n', 'f', '"k"', '12', '\\u00e9', '\\n', '٣', 'x', '{"a": ', '[1, ']


@settings(max_examples=3000, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=14).map("".join), kind=st.sampled_from(json_value.KINDS),
       lenient=st.booleans(), start=st.integers(0, 2))
def test_the_scanner_reads_as_the_recursive_rules(text: str, kind: str, lenient: bool, start: int) -> None:
    """Status and end of every JSON rule on JSON-like text, finished or not, equal the recursive rules'
    (where both fail, only that they fail)."""
    start = min(start, len(text))
    expected = ARENA.at(RULES[kind], Context(text, lenient=lenient), start)
    found = json_value.scan(text, start, kind, lenient)
    if expected.status.value == json_value.FAIL:
        assert found.status == json_value.FAIL
    else:
        assert (found.status, found.end) == (expected.status.value, expected.end)


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                       max_size=3),
                          max_leaves=15),
       indent=st.sampled_from([None, 1]))
def test_a_resumed_scan_reads_as_a_fresh_one(value: object, indent: int | None) -> None:
    """Scanning each prefix from the previous scan's checkpoint reads as scanning it from the start."""
    text = json.dumps(value, indent=indent)
    resume = None
    for cut in range(len(text) + 1):
        resumed = json_value.scan(text[:cut], 0, "value", True, resume)
        fresh = json_value.scan(text[:cut], 0, "value", True)
        assert (resumed.status, resumed.end) == (fresh.status, fresh.end)
        resume = resumed.resume
