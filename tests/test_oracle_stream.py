"""llama.cpp's own stream judged as llama-server runs it, and the grammar a model samples under, from the oracle."""

from __future__ import annotations

from typing import Any

import pytest

from chatparity.model import Message, Rejection, ToolCall
from harness.oracle_stream import judge_stream
from harness.server_diffs import InvalidDiff, applied
from oracle.partial_reads import decoded

CALL = ToolCall("get_weather", '{"city": "Rio"}')
MARKERS = ("<tool_call>", "</tool_call>")


def kinds(found: list[Any]) -> list[str]:
    """The kinds of the defects found."""
    return [defect.kind for defect in found]


def test_a_call_taken_back_ends_the_stream_with_the_diff_error_and_what_the_client_holds() -> None:
    views = {1: Message("H"), 2: Message("H", tool_calls=(CALL,)), 3: Message("Hi")}
    found = judge_stream("abc", views.items(), frozenset(), Message("Hi"), MARKERS)
    assert kinds(found) == ["retraction"]
    assert found[0].error == "Invalid diff: now finding less tool calls!" and (found[0].shown_at, found[0].at) == (2, 3)
    assert found[0].client == Message("H", tool_calls=(CALL,))


def test_text_cut_short_is_a_silent_shrink_and_the_client_keeps_the_longer_text() -> None:
    views = {1: Message("Hel"), 2: Message("He"), 3: Message("Here")}
    found = judge_stream("abc", views.items(), frozenset(), Message("Here"), MARKERS)
    assert kinds(found) == ["silent_shrink"] and found[0].field == "content"
    assert found[0].client == Message("Helre")


def test_a_marker_start_shown_then_dropped_is_named() -> None:
    views = {1: Message("Hi <tool"), 2: Message("Hi")}
    found = judge_stream("ab", views.items(), frozenset(), None, MARKERS)
    assert kinds(found) == ["marker_dropped"] and found[0].marker == "<tool_call>"


def test_an_empty_parse_after_something_was_shown_and_an_error_mid_stream() -> None:
    views = {1: Message("Hi"), 2: Message("Hi"), 3: Rejection("bad"), 4: Message("Hi!")}
    found = judge_stream("abcd", views.items(), frozenset({2}), Message("Hi!"), MARKERS)
    assert kinds(found) == ["empty_parse", "error_mid_stream"]
    assert (found[0].at, found[0].shown_at) == (2, 1) and found[1].error == "bad"


def test_a_clean_stream_and_a_cut_reply_have_no_defect() -> None:
    views = {1: Message("H"), 2: Message("Hi")}
    assert judge_stream("ab", views.items(), frozenset(), Message("Hi"), MARKERS) == []
    assert judge_stream("ab", views.items(), frozenset({1}), None, MARKERS) == []


def test_the_finished_read_taking_back_a_call_is_judged_at_the_finish() -> None:
    views = {1: Message(tool_calls=(CALL,))}
    found = judge_stream("a", views.items(), frozenset(), Message("a"), MARKERS)
    assert kinds(found) == ["retraction"] and found[0].finish


STREAMED = [
    ("inclusionai-ling-3.0-flash.jinja",
     "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Rio</arg_value>\n</tool_call>"),
    ("Qwen-Qwen3-0.6B.jinja",
     '<think>\nok\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call>'),
    ("Mistral-Small-3.2-24B-Instruct-2506.jinja", '[TOOL_CALLS]get_weather[ARGS]{"city": "Rio"}'),
]


@pytest.mark.parametrize(("template", "reply"), STREAMED)
def test_the_diffs_emulated_break_where_llama_servers_own_diffs_break(
    oracle: Any, render_upstream: Any, template: str, reply: str
) -> None:
    rendered = render_upstream(template)
    ends = list(range(1, len(reply) + 1))
    stream = oracle.stream(rendered.handle, reply, ends)
    views = decoded(stream.written)
    errors, client, shown = [], Message(), Message()
    for view, end in zip(views, ends):
        if not isinstance(view, Message) or view == shown:
            errors.append("")
            continue
        try:
            client = applied(client, shown, view)
            errors.append("")
        except InvalidDiff as error:
            errors.append(str(error))
        shown = view
    emulated = [index for index, error in enumerate(errors) if error]
    own = [index for index, error in enumerate(stream.diff_errors) if error]
    assert emulated == own
    assert [errors[index] for index in own] == [stream.diff_errors[index].splitlines()[0] for index in own]
    empty = [index for index, end in enumerate(ends) if oracle.parse(rendered.handle, reply[:end], True) == Message()]
    assert stream.kept == empty


def test_the_grammar_verdicts_follow_llama_servers_sampler(oracle: Any, render_upstream: Any) -> None:
    qwen = render_upstream("Qwen-Qwen3-0.6B.jinja")
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call>'
    thought = "<think>\nok\n</think>\n\n"
    accepted = oracle.grammar(qwen.handle, thought + call)
    assert (accepted.verdict, accepted.start) == ("accepts", len(thought)) and accepted.writable
    after = oracle.grammar(qwen.handle, thought + call + "\nMore")
    assert (after.verdict, after.at) == ("rejects", len(thought + call) + 1) and not after.writable
    assert oracle.grammar(qwen.handle, "<think>\n<tool_call> inside\n</think>\n\nHi").verdict == "untriggered"
    assert oracle.grammar(qwen.handle, thought + call[:20], partial=True).verdict == "accepts"
    assert oracle.grammar(qwen.handle, thought + call[:20]).verdict == "incomplete"
    assert oracle.grammar(render_upstream("Qwen-Qwen3-0.6B.jinja", tools=[]).handle, "Hi").verdict == "free"
