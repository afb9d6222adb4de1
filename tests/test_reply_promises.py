"""The stream's promises: a stream never shows a call that its end drops, and a finished message never
carries a call whose arguments are not a JSON object, even where llama.cpp's final read drops the call or
hands out broken arguments (docs/reply.md, "Streams keep their promises")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reply
from reply.promises import ArgumentsScan, closed_arguments, shown_arguments
from tests.reply_support import session

XML_CALL = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nRio\n</parameter>\n"
            "<parameter={name}>\n{value}\n</parameter>\n</function>\n</tool_call>")
BROKEN = [
    ("Qwen3.5-4B.jinja", "nothink/auto", XML_CALL.format(name="days", value="three")),
    ("Qwen3.5-4B.jinja", "think/auto", "<think>\nok\n</think>\n\nSure.\n\n" + XML_CALL.format(name="days", value="three")),
    ("Qwen3.5-4B.jinja", "nothink/auto", "Sure.\n\n" + XML_CALL.format(name="color", value="red")),
    ("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "nothink/auto", XML_CALL.format(name="days", value="three")),
    ("Qwen3-Coder.jinja", "nothink/auto",
     ("<tool_call>\n<function=get_weather>\n<parameter=city>Rio</parameter>\n<parameter=days>4</parameter>\n"
      "</function>\n</tool_call>")),
    ("Qwen3-Coder.jinja", "nothink/auto", "<function=get_weather>\n<parameter=city>\nRio\n</parameter>\n</function>"),
]


def is_object(arguments: str) -> bool:
    """Whether call arguments are a JSON object."""
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def retraction(before: reply.Message, after: reply.Message) -> str:
    """What `after` takes back from `before` ('' when nothing)."""
    if not (after.content.startswith(before.content)
            and after.reasoning_content.startswith(before.reasoning_content)):
        return "text retracted"
    if len(after.tool_calls) < len(before.tool_calls):
        return f"tool_calls vanished: {len(before.tool_calls)} -> {len(after.tool_calls)}"
    for old, new in zip(before.tool_calls, after.tool_calls):
        if not (new.name.startswith(old.name) and new.arguments.startswith(old.arguments)):
            return f"call changed: {old} -> {new}"
    return ""


@pytest.mark.parametrize("template,mode,text", BROKEN)
def test_a_call_llama_cpp_drops_or_breaks_is_kept_with_object_arguments(template: str, mode: str,
                                                                          text: str) -> None:
    """A call shown while streaming stays at the end, its arguments a JSON object, and bad_args is reported;
    the whole parse equals the stream's end at every chunk size."""
    reader = reply.open(session(template, mode))
    whole = reader.parse(text)
    assert whole.tool_calls and all(is_object(call.arguments) for call in whole.tool_calls)
    assert reply.Problem.BAD_ARGS in whole.problems
    for size in (1, 5, len(text)):
        stream = reader.stream()
        shown = reply.Message()
        for start in range(0, len(text), size):
            snapshot = stream.feed(text[start:start + size])
            assert retraction(shown, snapshot) == "", text[:start + size]
            shown = snapshot
        final = stream.finish()
        assert retraction(shown, final) == "" and final == whole


def test_unbroken_calls_read_as_llama_cpp_writes_them() -> None:
    """A well-formed call keeps its arguments text exactly and reports no bad_args."""
    reader = reply.open(session("Qwen3.5-4B.jinja", "nothink/auto"))
    message = reader.parse(XML_CALL.format(name="days", value="3"))
    assert message.tool_calls[0].arguments == '{"city":"Rio","days":3}'
    assert reply.Problem.BAD_ARGS not in message.problems


def test_cut_off_arguments_show_up_to_their_last_closable_point() -> None:
    """A cut-off reply shows a string value as it arrives but not a number, key or literal still arriving."""
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", "nothink/auto"))
    head = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ri'
    assert reader.parse(head, partial=True).tool_calls[0].arguments == '{"city": "Ri'
    assert reader.parse(head + 'o", "days": 4', partial=True).tool_calls[0].arguments == '{"city": "Rio"'
    assert reader.parse(head + 'o", "da', partial=True).tool_calls[0].arguments == '{"city": "Rio"'


def test_closing_examples() -> None:
    """Arguments are closed at their last closable point; nothing closable closes to {}."""
    assert closed_arguments('{"city":"Rio","days":t') == '{"city":"Rio"}'
    assert closed_arguments('{"a":[1,{"b":"x') == '{"a":[1,{"b":"x"}]}'
    assert closed_arguments('{"a": 12') == '{"a": 12}'
    assert closed_arguments('{"t": "a\\u00') == '{"t": "a"}'
    assert closed_arguments("[1, 2]") == "{}" and closed_arguments("") == "{}"
    assert shown_arguments('{"a": 1} trailing') == '{"a": 1}'


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4), indent=st.sampled_from([None, 1]),
       ascii_only=st.booleans())
def test_every_prefix_shows_a_prefix_that_closes_into_an_object(value: dict[str, Any], indent: int | None,
                                                              ascii_only: bool) -> None:
    """For every prefix of a JSON object: what is shown is a prefix of it that only grows, closes into a JSON
    object that starts with it, and a resumed scan agrees with a fresh one; the whole object is shown whole."""
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    scan = ArgumentsScan()
    previous = ""
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        shown = shown_arguments(prefix, scan)
        assert shown == shown_arguments(prefix) and prefix.startswith(shown) and shown.startswith(previous)
        closed = closed_arguments(prefix)
        assert is_object(closed) and (closed.startswith(shown) or closed == "{}" and shown in ("", "{"))
        previous = shown
    assert shown_arguments(text) == text and closed_arguments(text) == text


def test_raw_control_characters_in_strings_show_escaped() -> None:
    """A control character written raw inside a string is escaped in what is shown and in the closed object,
    so every prefix shows a prefix of the finished arguments, which are a JSON object."""
    raw = '{"code": "def f():\n\treturn 1", "note": "a\x01b"}'
    finished = closed_arguments(raw)
    assert finished == '{"code": "def f():\\n\\treturn 1", "note": "a\\u0001b"}' and is_object(finished)
    scan = ArgumentsScan()
    previous = ""
    for cut in range(len(raw) + 1):
        shown = shown_arguments(raw[:cut], scan)
        assert shown.startswith(previous) and finished.startswith(shown), raw[:cut]
        assert closed_arguments(raw[:cut]).startswith(shown) and is_object(closed_arguments(raw[:cut]))
        previous = shown


def test_a_python_argument_with_a_raw_newline_streams_and_finishes_as_one_object() -> None:
    """LFM2's Python-quoted argument holding a raw newline (llama.cpp copies it raw): every stream only grows
    and ends, like the whole parse, on a JSON object with the newline escaped."""
    reader = reply.open(session("LFM2.5-8B-A1B.jinja", "think/auto"))
    text = "<|tool_call_start|>[get_weather(city='Rio\nde Janeiro', days=4)]<|tool_call_end|>"
    whole = reader.parse(text)
    assert [call.arguments for call in whole.tool_calls] == ['{"city":"Rio\\nde Janeiro","days":4}']
    for size in (1, 3):
        stream, shown = reader.stream(), ""
        for start in range(0, len(text), size):
            calls = stream.feed(text[start:start + size]).tool_calls
            arguments = calls[0].arguments if calls else ""
            assert arguments.startswith(shown), (shown, arguments)
            shown = arguments
        assert stream.finish() == whole


@pytest.mark.parametrize("template,mode,text", [
    ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "nothink/auto", "Hello <|START_RESPONSE|>"),
    ("upstage-Solar-Open-100B.jinja", "nothink/auto",
     '<|tool_calls|><|tool_call:begin|>call7<|tool_call:name|>get_weather'),
])
def test_a_cut_reply_reads_as_its_stream_ends_refusals_included(template: str, mode: str, text: str) -> None:
    """A cut reply's whole read equals the last snapshot of a stream of it, in any chunking; where llama.cpp
    refuses the text so far, both refuse, and the stream goes on reading later chunks."""
    reader = reply.open(session(template, mode))
    outcomes = []
    for cut in range(1, len(text) + 1):
        try:
            outcomes.append(reader.parse(text[:cut], partial=True))
        except reply.Rejected:
            outcomes.append(None)
    assert None in outcomes
    for size in (1, 2, 5):
        stream = reader.stream()
        for start in range(0, len(text), size):
            end = min(start + size, len(text))
            try:
                snapshot: reply.Message | None = stream.feed(text[start:end])
            except reply.Rejected:
                snapshot = None
            assert snapshot == outcomes[end - 1], (size, text[:end])


def test_a_cut_reply_with_reasoning_left_in_content_keeps_the_call_its_stream_showed() -> None:
    """With reasoning_format none, a cut reply whose partial read drops a call shown earlier reads whole as
    every stream of it ends: with the call."""
    reader = reply.open(session("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "think/auto/reasoning_format=none"))
    text = ("</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>Rio</parameter>\n"
            "<parameter=days>4</parameter>\n</function>\n</tool")
    for cut in range(len(text) - 40, len(text) + 1):
        whole = reader.parse(text[:cut], partial=True)
        assert [call.name for call in whole.tool_calls] == ["get_weather"], text[:cut]
        for size in (1, 2, 5, 17, cut):
            stream = reader.stream()
            for start in range(0, cut, size):
                snapshot = stream.feed(text[start:min(start + size, cut)])
            assert snapshot == whole, (size, text[:cut])
