"""Unit tests of the shape generators on hand-made frames (no template rendering)."""

from __future__ import annotations

import json

from chatparity.model import Reply, ToolMode
from corpora.call_shapes import (
    PROSE,
    CallFrame,
    CallShape,
    ToolSet,
    Turn,
    Written,
    break_arguments,
    call_replies,
    split_call,
    tool_set,
    unwrap_values,
)
from corpora.fuzz import fuzz_replies
from corpora.partials import CutPoint, Landmarks, cut_points, partial_replies
from corpora.thinking_shapes import (
    CONTENT,
    REASONING,
    ThinkFrame,
    ThinkingShape,
    content_wrap,
    thinking_replies,
)
from corpora.tools import STANDARD_TOOLS

HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}\n</tool_call>'
MARKERS = ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>")


def tools() -> ToolSet:
    found = tool_set(STANDARD_TOOLS)
    assert isinstance(found, ToolSet)
    return found


def test_tool_set_finds_each_tool_by_parameter_types() -> None:
    found = tools()
    assert (found.weather, found.city, found.days) == ("get_weather", "city", "days")
    assert found.empty == "get_time"
    assert found.nested == ("create_event", "event")
    assert found.code == ("run_code", "code")


def test_tool_set_without_string_and_integer_tool_says_why() -> None:
    assert tool_set(STANDARD_TOOLS[2:3]) == "no tool takes both a string and an integer parameter"


def by_shape(replies: list[Reply]) -> dict[str, Reply]:
    return {reply.shape: reply for reply in replies}


def test_thinking_shapes_on_a_closed_prompt() -> None:
    frame = ThinkFrame("<think>", "</think>", opened=False, thinking=True)
    replies, skips = thinking_replies(frame, tuple(ThinkingShape))
    shapes = by_shape(replies)
    lead = shapes["leading_thought"]
    assert lead.text == f"<think>{REASONING}</think>{CONTENT}"
    assert lead.truth is not None and lead.truth.reasoning_content == REASONING and lead.truth.content == CONTENT
    assert shapes["bare_end_tag"].text.startswith(CONTENT + "</think>") and shapes["bare_end_tag"].truth is None
    assert shapes["start_tag_after_text"].text.index("<think>") > 0
    assert shapes["second_end_tag"].text.count("</think>") == 2
    assert "</think>" not in shapes["unclosed_thought"].text and shapes["unclosed_thought"].truth is None
    assert shapes["whitespace_around_tags"].text.startswith("<think>\n")
    assert [s.shape for s in skips] == ["tags_in_argument"]


def test_thinking_shapes_start_inside_an_opened_thought() -> None:
    frame = ThinkFrame("<think>", "</think>", opened=True, thinking=True)
    replies, _ = thinking_replies(frame, tuple(s for s in ThinkingShape if s is not ThinkingShape.TAGS_IN_ARGUMENT))
    shapes = by_shape(replies)
    assert shapes["leading_thought"].text == f"{REASONING}</think>{CONTENT}"
    assert shapes["no_thought"].text == f"</think>{CONTENT}"
    assert shapes["unclosed_thought"].text == REASONING
    assert shapes["bare_end_tag"].text.startswith(REASONING + "</think>")
    assert not any(reply.text.startswith("<think>") for reply in replies)


def test_no_truth_for_a_thought_when_thinking_is_off_or_content_is_wrapped() -> None:
    off = by_shape(thinking_replies(ThinkFrame("<think>", "</think>", False, False), (ThinkingShape.LEADING_THOUGHT,))[0])
    assert off["leading_thought"].truth is None
    wrapped = ThinkFrame("<|channel|>analysis<|message|>", "<|end|>", False, True,
                         content_before="<|channel|>final<|message|>")
    assert by_shape(thinking_replies(wrapped, (ThinkingShape.LEADING_THOUGHT,))[0])["leading_thought"].truth is None
    closed = ThinkFrame("<think>", "</think>", False, True, closed_by_prompt=True)
    assert thinking_replies(closed, (ThinkingShape.LEADING_THOUGHT,))[0][0].truth is None
    required = ThinkFrame("<think>", "</think>", True, True, content_allowed=False)
    assert [r.truth for r in thinking_replies(required, (ThinkingShape.LEADING_THOUGHT, ThinkingShape.NO_THOUGHT))[0]] \
        == [None, None]


def test_content_wrap_drops_an_empty_thought_and_keeps_wrappers() -> None:
    assert content_wrap(f"<think>\n\n</think>\n\n{CONTENT}", "</think>") == ("", "")
    assert content_wrap(f"<|END_THINKING|><|START_RESPONSE|>{CONTENT}<|END_RESPONSE|>", "<|END_THINKING|>") == (
        "<|START_RESPONSE|>", "<|END_RESPONSE|>")
    assert content_wrap(None, "</think>") == ("", "")


def test_split_call_separates_an_empty_thought_and_finds_the_opening() -> None:
    split = split_call("\n</think>\n\n" + HERMES_CALL, "get_weather", "</think>", MARKERS)
    assert not isinstance(split, str)
    assert split.head == "\n</think>\n\n" and split.body == HERMES_CALL and split.opening == "<tool_call>"
    mistral = split_call('[TOOL_CALLS]get_weather[ARGS]{"city": "Rio"}', "get_weather", "", ())
    assert not isinstance(mistral, str) and mistral.opening == "[TOOL_CALLS]"
    bare = split_call('{"name": "get_weather"}', "get_weather", "", ())
    assert not isinstance(bare, str) and bare.opening == ""
    assert split_call("nothing", "get_weather", "", ()) == "the written call does not hold the tool name 'get_weather'"


def test_break_arguments_per_syntax() -> None:
    broken = break_arguments(HERMES_CALL, "Rio", MARKERS)
    assert broken is not None and '"Rio, "days"' in broken
    xml = "<tool_call>\n<function=get_weather>\n<parameter=city>\nRio\n</parameter>\n</function>\n</tool_call>"
    broken_xml = break_arguments(xml, "Rio", MARKERS)
    assert broken_xml == xml.replace("Rio\n</parameter>", "Rio\n", 1)
    assert break_arguments("get_weather Rio", "Rio", ()) is None


def hermes_frame(mode: ToolMode, opened: bool = False) -> CallFrame:
    found = tools()
    weather = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "Xq7Tz2Lp9", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Rio"}}}]}
    empty = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "Xq7Tz2Lp9", "type": "function", "function": {"name": "get_time", "arguments": {}}}]}
    written = {
        Turn.ONE_CALL: Written(weather, HERMES_CALL),
        Turn.EMPTY_ARGUMENTS: Written(empty, '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'),
        Turn.PROSE_CALL: Written(weather, None, "the template failed"),
    }
    return CallFrame(found, mode, written, MARKERS, "<think>", "</think>", opened)


def test_call_shapes_compose_and_corrupt_the_written_call() -> None:
    replies, skips = call_replies(hermes_frame(ToolMode.AUTO), tuple(CallShape))
    shapes = by_shape(replies)
    assert shapes["text_after_call"].text.startswith(HERMES_CALL) and len(shapes["text_after_call"].text) > len(HERMES_CALL)
    assert "launch_rocket" in shapes["unknown_tool_name"].text and "get_weather" not in shapes["unknown_tool_name"].text
    assert shapes["call_without_opening_wrapper"].text == HERMES_CALL.replace("<tool_call>", "", 1)
    assert shapes["call_inside_thought"].text.startswith("<think>") and shapes["call_inside_thought"].text.endswith("</think>")
    empty = shapes["empty_arguments"]
    assert empty.truth is not None and [(c.name, json.loads(c.arguments)) for c in empty.truth.tool_calls] == [("get_time", {})]
    after = shapes["text_after_call"].truth
    assert after is not None and after.content == "I will report back once I have it."
    assert [call.name for call in after.tool_calls] == ["get_weather"]
    assert all(reply.truth is None for reply in replies if reply.shape not in {"empty_arguments", "text_after_call", "whitespace_before_closing_tag"})
    prose = shapes["prose_before_call"]
    assert prose.text == f"{PROSE}\n{HERMES_CALL}" and prose.truth is None and "the template failed" in prose.note
    reasons = {skip.shape: skip.reason for skip in skips}
    assert reasons["boolean_written_as_text"] == "no tool for this shape"
    assert shapes["two_calls_one_unknown"].text == HERMES_CALL + HERMES_CALL.replace("get_weather", "launch_rocket")


def test_call_shapes_carry_no_truth_where_calls_are_not_offered() -> None:
    replies, _ = call_replies(hermes_frame(ToolMode.CHOICE_NONE), (CallShape.EMPTY_ARGUMENTS,))
    assert [reply.truth for reply in replies] == [None]


def test_call_shapes_skip_every_shape_without_a_written_call() -> None:
    frame = CallFrame(tools(), ToolMode.AUTO, {Turn.ONE_CALL: Written({}, None, "never writes calls")}, ())
    replies, skips = call_replies(frame, tuple(CallShape))
    assert replies == [] and {skip.reason for skip in skips} == {"never writes calls"} and len(skips) == len(CallShape)


XML_CALL = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nRio\n</parameter>\n"
            "<parameter=days>\n4\n</parameter>\n</function>\n</tool_call>")


def test_unwrap_values_removes_only_the_newlines_around_values() -> None:
    assert unwrap_values(XML_CALL, ("Rio", "4")) == XML_CALL.replace(">\nRio\n<", ">Rio<").replace(">\n4\n<", ">4<")
    assert unwrap_values(HERMES_CALL, ("Rio", "4")) is None


def test_unwrapped_values_and_an_extra_parameter_carry_the_meant_call() -> None:
    meant = {"role": "assistant", "content": "", "tool_calls": [{"id": "Xq7Tz2Lp9", "type": "function", "function": {
        "name": "get_weather", "arguments": {"city": "Rio", "days": 4}}}]}
    extra = {"role": "assistant", "content": "", "tool_calls": [{"id": "Xq7Tz2Lp9", "type": "function", "function": {
        "name": "get_weather", "arguments": {"city": "Rio", "days": 4, "units": "metric"}}}]}
    extra_text = XML_CALL.replace("</function>", "<parameter=units>\nmetric\n</parameter>\n</function>")
    written = {Turn.ONE_CALL: Written(meant, XML_CALL), Turn.EXTRA_PARAMETER: Written(extra, extra_text)}
    frame = CallFrame(tools(), ToolMode.AUTO, written, MARKERS)
    shapes = by_shape(call_replies(frame, (CallShape.UNWRAPPED_VALUES, CallShape.EXTRA_PARAMETER))[0])
    unwrapped = shapes["argument_values_not_wrapped_in_newlines"]
    assert "<parameter=city>Rio</parameter>" in unwrapped.text and "<parameter=days>4</parameter>" in unwrapped.text
    assert unwrapped.truth is not None
    assert [(c.name, json.loads(c.arguments)) for c in unwrapped.truth.tool_calls] == [
        ("get_weather", {"city": "Rio", "days": 4})]
    named = shapes["parameter_not_in_schema"]
    assert named.text == extra_text and named.truth is not None
    assert [json.loads(c.arguments) for c in named.truth.tool_calls] == [{"city": "Rio", "days": 4, "units": "metric"}]
    _, skips = call_replies(hermes_frame(ToolMode.AUTO), (CallShape.UNWRAPPED_VALUES,))
    assert [skip.reason for skip in skips] == ["the template does not wrap argument values in newlines"]
    none_mode = CallFrame(tools(), ToolMode.CHOICE_NONE, written, MARKERS)
    assert [r.truth for r in call_replies(none_mode, (CallShape.UNWRAPPED_VALUES, CallShape.EXTRA_PARAMETER))[0]] == [
        None, None]


MARKS = Landmarks(MARKERS, (REASONING,), ("get_weather",), ("Rio",))


def test_cut_points_are_at_the_marked_places() -> None:
    text = f"<think>{REASONING}</think>" + HERMES_CALL
    points = dict(cut_points(text, MARKS))
    assert text[:points[CutPoint.IN_MARKER]] == "<th"
    assert text[:points[CutPoint.AFTER_MARKER]] == "<think>"
    assert text[:points[CutPoint.IN_THOUGHT]] == "<think>" + REASONING[:len(REASONING) // 2]
    assert text[:points[CutPoint.IN_NAME]].endswith('"name": "get_w')
    assert text[:points[CutPoint.IN_ARGUMENTS]].endswith('"city": "R')


def test_cut_points_inside_and_after_the_call_marker() -> None:
    text = "<think>\n\n</think>\n\n" + HERMES_CALL
    points = dict(cut_points(text, MARKS))
    assert text[:points[CutPoint.IN_MARKER]] == "<th"
    assert text[:points[CutPoint.IN_CALL_MARKER]].endswith("</think>\n\n<tool")
    assert text[:points[CutPoint.AFTER_CALL_MARKER]].endswith("</think>\n\n<tool_call>")


def test_cut_points_inside_the_whitespace_before_the_closing_tag_and_inside_the_tag() -> None:
    text = HERMES_CALL.replace("\n</tool_call>", " \n</tool_call>")
    points = dict(cut_points(text, MARKS))
    assert text[:points[CutPoint.IN_SPACE_BEFORE_CLOSING]].endswith("4}} ")
    assert text[:points[CutPoint.IN_CLOSING]].endswith("4}} \n</tool")
    assert CutPoint.IN_SPACE_BEFORE_CLOSING not in dict(cut_points(HERMES_CALL.replace("\n</", "</"), MARKS))


def test_whitespace_before_the_closing_tag_means_the_same_call() -> None:
    replies, _ = call_replies(hermes_frame(ToolMode.AUTO), (CallShape.SPACED_CLOSING,))
    assert [reply.text for reply in replies] == [HERMES_CALL.replace("\n</tool_call>", "\n \n</tool_call>")]
    assert replies[0].truth is not None and [call.name for call in replies[0].truth.tool_calls] == ["get_weather"]
    frame = CallFrame(tools(), ToolMode.AUTO, {Turn.ONE_CALL: Written({}, "[TOOL_CALLS]get_weather{}")}, ())
    assert [skip.reason for skip in call_replies(frame, (CallShape.SPACED_CLOSING,))[1]] == [
        "the written call has no closing tag"]


def test_partial_replies_are_flagged_and_named_for_their_cut() -> None:
    source = Reply(HERMES_CALL, False, "toolcall", "text_after_call")
    cuts = partial_replies([(source, tuple(CutPoint))], MARKS)
    assert {reply.shape for reply in cuts} == {
        "toolcall:text_after_call@in_marker", "toolcall:text_after_call@after_marker",
        "toolcall:text_after_call@in_call_name", "toolcall:text_after_call@in_arguments",
        "toolcall:text_after_call@past_argument_value", "toolcall:text_after_call@in_whitespace_before_closing_tag",
        "toolcall:text_after_call@in_closing_tag_after_whitespace"}
    assert all(reply.partial and HERMES_CALL.startswith(reply.text) and reply.text for reply in cuts)
    meant = {reply.shape.rsplit("@", 1)[1]: reply.meant_problems for reply in cuts}
    assert meant["in_arguments"] == ("cut_off",) and meant["in_call_name"] == meant["after_marker"] == ()


def test_fuzz_is_seeded_and_bounded() -> None:
    first = fuzz_replies(MARKERS, "t.jinja/think/auto", 7, 12)
    assert first == fuzz_replies(MARKERS, "t.jinja/think/auto", 7, 12)
    assert [r.text for r in first] != [r.text for r in fuzz_replies(MARKERS, "t.jinja/think/auto", 8, 12)]
    assert len(first) == 12 and all(r.shape.startswith("fuzz:seed=7:") for r in first)
    assert any(m in r.text for r in first for m in MARKERS)


def test_hand_written_syntaxes_encode_every_call() -> None:
    from corpora.written_turns import HAND_SYNTAXES

    calls = [{"id": "Xq7Tz2Lp9", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "東京"}}},
             {"id": "Bm4Rw8Kc1", "type": "function", "function": {"name": "get_time", "arguments": {}}}]
    assert HAND_SYNTAXES["lfm2"](calls) == '<|tool_call_start|>[get_weather(city="東京"), get_time()]<|tool_call_end|>'
    assert json.loads(HAND_SYNTAXES["granite"](calls).removeprefix("<|tool_call|>")) == [
        {"name": "get_weather", "arguments": {"city": "東京"}}, {"name": "get_time", "arguments": {}}]
    deepseek = HAND_SYNTAXES["deepseek_v3"](calls)
    assert deepseek.startswith("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n")
    assert deepseek.count("<｜tool▁call▁end｜>") == 2 and deepseek.endswith("<｜tool▁calls▁end｜>")
