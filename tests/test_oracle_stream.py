"""The oracle streams a reply as llama-server does: a partial read and diffs per boundary, then the finished read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatparity.model import Message, Rejection, ToolCall
from oracle.client import byte_offsets

REPLY = ('<think>Rio 🌧 é 雨</think>Il pleut à Rio 🌧.\n<tool_call>\n'
         '{"name": "get_weather", "arguments": {"city": "Rio de Janeiro ☔", "days": 4}}\n</tool_call>')


def accumulate(diffs: list[list[dict[str, Any]]]) -> Message:
    """The message a streaming client builds from llama-server's diffs."""
    reasoning, content, calls = "", "", []
    for step in diffs:
        for diff in step:
            reasoning += diff["reasoning_content_delta"]
            content += diff["content_delta"]
            index = diff["tool_call_index"]
            if index is None:
                continue
            delta = diff["tool_call_delta"]
            if index == len(calls):
                calls.append({"name": "", "arguments": "", "id": ""})
            calls[index]["name"] = delta["name"] or calls[index]["name"]
            calls[index]["id"] = delta["id"] or calls[index]["id"]
            calls[index]["arguments"] += delta["arguments"]
    return Message(content, reasoning, tuple(ToolCall(**call) for call in calls))


def test_byte_offsets_never_fall_inside_a_utf8_sequence():
    text = "aé🌧b"
    offsets = byte_offsets(text, list(range(len(text) + 1)))
    assert offsets == [0, 1, 3, 7, 8]
    encoded = text.encode("utf-8")
    assert all(offset == len(encoded) or encoded[offset] & 0xC0 != 0x80 for offset in offsets)


@pytest.mark.parametrize("boundaries", [[2, 1], [0, 0], [5, 99]])
def test_boundaries_must_increase_inside_the_text(boundaries):
    with pytest.raises(ValueError, match="boundar"):
        byte_offsets("hello", boundaries)


def test_a_stream_at_every_code_point_accumulates_to_the_finished_read(oracle, render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja")
    streamed = oracle.stream(rendered.handle, REPLY, list(range(len(REPLY))))
    finished = oracle.parse(rendered.handle, REPLY)
    assert streamed.final == finished
    assert finished.content.startswith("Il pleut à Rio 🌧.")
    assert json.loads(finished.tool_calls[0].arguments) == {"city": "Rio de Janeiro ☔", "days": 4}
    assert len(streamed.partials) == len(REPLY)
    assert streamed.diff_errors == [""] * len(REPLY) and streamed.final_diff_error == ""
    assert accumulate(streamed.diffs + [streamed.final_diffs]) == finished
    for cut, partial in enumerate(streamed.partials):
        assert accumulate(streamed.diffs[: cut + 1]) == partial
        assert "\ufffd" not in partial.content + partial.reasoning_content


def test_each_partial_is_the_partial_read_of_its_prefix(oracle, render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja")
    cuts = [5, 12, 19, 30, 44, 70, 100, len(REPLY) - 3]
    streamed = oracle.stream(rendered.handle, REPLY, cuts)
    for cut, partial in zip(cuts, streamed.partials):
        assert partial == oracle.parse(rendered.handle, REPLY[:cut], partial=True), REPLY[:cut]
    assert "雨" in streamed.partials[2].reasoning_content


def test_a_stream_keeps_its_last_message_when_a_prefix_reads_empty_and_ends_rejected(oracle, render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja")
    reply = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call><|im_end|>'
    cuts = [len(reply) - len("<|im_end|>"), len(reply) - 3]
    streamed = oracle.stream(rendered.handle, reply, cuts)
    assert [call.name for call in streamed.partials[0].tool_calls] == ["get_weather"]
    assert oracle.parse(rendered.handle, reply[: cuts[1]], partial=True) == Message()
    assert streamed.partials[1] == streamed.partials[0]
    assert streamed.diffs[1] == []
    assert isinstance(streamed.final, Rejection)
    assert streamed.final == oracle.parse(rendered.handle, reply)
    assert streamed.final_diffs == []
