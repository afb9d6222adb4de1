"""A stream's deltas: merged as an OpenAI client merges them, they give every snapshot and the finished reading."""

from __future__ import annotations

import pytest

import reply
from reply.deltas import Delta, ToolCallDelta, applied, delta_between
from tests.reply_support import SYNTAX_TEMPLATES, replies, sessions

FIRST_TEMPLATES = sorted(names[0] for names in SYNTAX_TEMPLATES.values())


def test_a_delta_holds_only_what_was_added() -> None:
    before = reply.Message(content="Hi", tool_calls=(reply.ToolCall("get_weather", '{"ci'),))
    after = reply.Message(content="Hi there", tool_calls=(reply.ToolCall("get_weather", '{"city": 1}'),
                                                          reply.ToolCall("get_time", "{}", "call_2")))
    delta = delta_between(before, after)
    assert delta == Delta("", " there", (ToolCallDelta(0, "", "", 'ty": 1}'), ToolCallDelta(1, "call_2", "get_time", "{}")))
    assert applied(before, delta) == after
    assert delta_between(after, after).empty


def test_a_new_call_is_sent_even_before_its_arguments_begin() -> None:
    after = reply.Message(tool_calls=(reply.ToolCall("get_time", ""),))
    assert delta_between(reply.Message(), after).tool_calls == (ToolCallDelta(0, "", "get_time", ""),)


@pytest.mark.parametrize("template", FIRST_TEMPLATES)
def test_deltas_merged_give_every_snapshot_and_the_finished_reading(template: str) -> None:
    for session in sessions(template):
        try:
            reader = reply.open(session)
        except reply.Unsupported:
            continue
        for text, partial in replies(session):
            for size in (1, 3):
                stream, merged = reader.stream(), reply.Message()
                for start in range(0, len(text), size):
                    try:
                        merged = applied(merged, stream.feed_delta(text[start:start + size]))
                    except reply.Rejected:
                        continue
                    assert merged == stream.snapshot, (session.mode.label, text, start)
                if partial:
                    continue
                try:
                    merged = applied(merged, stream.finish_delta())
                except reply.Rejected:
                    continue
                assert merged == reader.parse(text), (session.mode.label, text)
