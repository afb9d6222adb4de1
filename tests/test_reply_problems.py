"""Problems reported beside a reading, and refusals: what a reply does wrong, named."""

from __future__ import annotations

from typing import Any

import pytest

import reply
from corpora.catalog import plan, replies
from reply import Problem
from tests.reply_support import WEATHER, session, written_turn
from tests.reply_support import replies as sample_replies

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call>'


def problems_of(mode: str, text: str, partial: bool = False) -> set[Problem]:
    """The problems of one hermes (Qwen3) reply, refused or not."""
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", mode))
    try:
        return set(reader.parse(text, partial=partial).problems)
    except reply.Rejected as refusal:
        return set(refusal.problems) | {Problem.BAD_SYNTAX}


@pytest.mark.parametrize("mode,text,partial,expected", [
    ("think/auto", CALL, False, set()),
    ("think/auto", "Hello", False, {Problem.NO_ACTION}),
    ("think/required", "Hello", False, {Problem.NO_ACTION}),
    ("think/auto", CALL + "\n" + CALL, False, {Problem.MULTIPLE_ACTIONS}),
    ("think/parallel", CALL + "\n" + CALL, False, set()),
    ("think/auto", "Sure. " + CALL, False, {Problem.PROSE_BEFORE_ACTION}),
    ("think/auto", CALL + "\nDone.", False, {Problem.BAD_SYNTAX, Problem.TEXT_AFTER_ACTION}),
    ("think/auto", CALL + "\n\nDone.\n\n", False, {Problem.BAD_SYNTAX, Problem.TEXT_AFTER_ACTION}),
    ("think/required", "Done. " + CALL + " x", False, {Problem.BAD_SYNTAX, Problem.TEXT_AFTER_ACTION}),
    ("think/parallel", CALL + "\n" + CALL.replace('"Rio"}', '"Rio"'), False,
     {Problem.BAD_SYNTAX, Problem.TEXT_AFTER_ACTION}),
    ("think/auto", CALL.replace("get_weather", "get_wether"), False, {Problem.BAD_SYNTAX, Problem.UNKNOWN_ACTION}),
    ("think/auto", CALL.replace('"Rio"}', '"Rio"'), False, {Problem.BAD_SYNTAX, Problem.BAD_ARGS}),
    ("think/auto", "<think>still thinking", True, {Problem.UNCLOSED_THINK, Problem.CUT_OFF}),
    ("think/auto", CALL[:30], True, {Problem.CUT_OFF}),
    ("think/none", "Hello", False, set()),
])
def test_problems(mode: str, text: str, partial: bool, expected: set[Problem]) -> None:
    """Each reply gets exactly the problems it has."""
    assert problems_of(mode, text, partial) == expected


def session_problems(template: str, mode: str, text: str) -> set[Problem]:
    """The problems of one reply in a session of a template, refused or not."""
    reader = reply.open(session(template, mode))
    try:
        return set(reader.parse(text).problems)
    except reply.Rejected as refusal:
        return set(refusal.problems) | {Problem.BAD_SYNTAX}


@pytest.mark.parametrize("template,mode,calls,end", [
    ("muse-glimmer.jinja", "think/auto", [WEATHER], "<|eot|>"),
    ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", "nothink/auto", [WEATHER], "</s>"),
    ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "nothink/auto", [WEATHER], "</s>"),
    ("meta-llama-Llama-3.1-8B-Instruct.jinja", "nothink/auto", [WEATHER], "<|eot_id|>"),
    ("openai-gpt-oss-120b.jinja", "think/auto", [WEATHER], "<|call|>"),
    ("google-gemma-4-31B-it.jinja", "think/auto", [WEATHER], "<turn|>"),
    ("Qwen-Qwen3-0.6B.jinja", "think/auto", [WEATHER], "<|im_end|>\n"),
    ("muse-glimmer.jinja", "think/none", [], "<|eot|>"),
    ("google-gemma-4-31B-it.jinja", "think/none", [], "<channel|>"),
])
def test_an_end_of_turn_or_a_stray_closing_marker_after_a_reply_is_no_text_after_an_action(
    template: str, mode: str, calls: list[tuple[str, dict[str, Any]]], end: str
) -> None:
    """The template's end of turn, its eos or a closing marker of its own after the reply adds no problem but
    the refusal llama.cpp may make of it; text after it, after a call, is text after an action."""
    text = written_turn(session(template, mode), calls, content="" if calls else "Hello there.")
    assert text is not None
    alone = session_problems(template, mode, text)
    assert session_problems(template, mode, text + end) - {Problem.BAD_SYNTAX} == alone
    after = session_problems(template, mode, text + end + "\nDone.")
    assert (Problem.TEXT_AFTER_ACTION in after) == bool(calls)


@pytest.mark.parametrize("end", ["<|eot_id|>", "</s>", "<|im_end|>Done."])
def test_a_marker_of_another_template_or_text_after_the_end_of_turn_is_text_after_an_action(end: str) -> None:
    """Only this template's own ends are passed over."""
    assert problems_of("think/auto", CALL + end) == {Problem.BAD_SYNTAX, Problem.TEXT_AFTER_ACTION}


def test_refusal_names_the_format() -> None:
    """A refused finished reply raises Rejected with llama.cpp's reason."""
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", "think/auto"))
    with pytest.raises(reply.Rejected, match="does not match the expected peg-native format"):
        reader.parse(CALL + "\nDone.")


def test_cut_reply_inside_thought_is_reasoning() -> None:
    """A reply cut inside its thought is reasoning, never content."""
    reader = reply.open(session("Qwen3.5-4B.jinja", "think/auto"))
    message = reader.parse("I am still thinking about", partial=True)
    assert (message.reasoning_content, message.content) == ("I am still thinking about", "")


@pytest.mark.parametrize("template", ["Qwen-Qwen3-0.6B.jinja", "Qwen3-Coder.jinja"])
def test_a_code_argument_with_braces_and_escaped_quotes_in_strings_has_no_problem(template: str) -> None:
    """Braces inside a string after escaped quotes are not counted as the arguments' own."""
    (planned,) = [p for p in plan("quick", template, None, "think/auto") if p.session.conversation == "single"]
    (code_call,) = [r for r in replies(planned, "quick") if r.shape == "code_call"]
    message = reply.open(planned.session).parse(code_call.text)
    assert "雨 {" in code_call.text
    assert message.problems == ()


def test_a_refused_reply_is_diagnosed_once_whatever_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole parse and every stream's finish of one refused reply share one diagnosis, the problems a
    fresh reader finds, from what the streams' record read; another reply, never streamed, is re-read."""
    import reply.reader

    calls: list[str] = []
    completes: list[int | None] = []
    diagnose = reply.reader.refusal_problems

    def counted(reader, text, complete=None):
        calls.append(text)
        completes.append(complete)
        return diagnose(reader, text, complete)

    monkeypatch.setattr(reply.reader, "refusal_problems", counted)
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", "think/auto"))
    refused = CALL.replace("get_weather", "get_wether")
    problems = []
    for chunk in (len(refused), 1, 7):
        stream = reader.stream()
        for start in range(0, len(refused), chunk):
            stream.feed(refused[start:start + chunk])
        with pytest.raises(reply.Rejected) as refusal:
            stream.finish()
        problems.append(refusal.value.problems)
    with pytest.raises(reply.Rejected) as refusal:
        reader.parse(refused)
    problems.append(refusal.value.problems)
    assert len(set(calls)) == len(calls) == 1
    assert set(problems) == {(Problem.BAD_SYNTAX, Problem.UNKNOWN_ACTION)}
    with pytest.raises(reply.Rejected) as other:
        reader.parse(CALL + "\nDone.")
    assert other.value.problems == (Problem.TEXT_AFTER_ACTION, Problem.BAD_SYNTAX)
    assert len(calls) == 2 and completes == [-1, None]
    assert problems_of("think/auto", refused) == set(problems[0])


@pytest.mark.parametrize("template,mode", [
    ("Qwen-Qwen3-0.6B.jinja", "think/parallel"),
    ("Qwen3-Coder.jinja", "think/auto"),
    ("GLM-4.6.jinja", "think/auto"),
    ("deepseek-ai-DeepSeek-V3.1.jinja", "nothink/auto"),
    ("Kimi-K2-Instruct.jinja", "think/parallel"),
    ("deepseek-ai-DeepSeek-V4.jinja", "think/auto"),
    ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "think/auto"),
])
def test_a_record_knows_each_prefix_that_reads_whole_with_a_call_closed(template: str, mode: str) -> None:
    """What a stream's record of a reply says of its every prefix (the longest one that parses whole with a
    call closed, which diagnosing a refusal needs) is what re-reading that prefix finds."""
    from reply.problems import complete_prefix

    reader = reply.open(session(template, mode))
    checked = 0
    for text, _ in sample_replies(session(template, mode)):
        record = reader.record_of(text)
        for size in range(len(text) + 1):
            assert record.complete_prefix(size) == complete_prefix(reader, text[:size]), (text, size)
        checked += record.complete_prefix(len(text)) > 0
    assert checked >= 3


@pytest.mark.parametrize("template,mode", [("upstage-Solar-Open-100B.jinja", "think/auto"),
                                           ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "think/auto"),
                                           ("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "think/auto")])
def test_a_refused_feed_carries_the_problems_of_everything_fed_so_far(template: str, mode: str) -> None:
    """Each refused feed of a character-by-character stream is diagnosed on the text fed so far, as a partial
    parse of that text is, not on the shorter text where the refusal began (a call's name arrives later)."""
    s = session(template, mode)
    reader = reply.open(s)
    refused = [(text, []) for text, _ in sample_replies(s)]
    for text, shown in refused:
        stream = reader.stream()
        for size in range(1, len(text) + 1):
            try:
                stream.feed(text[size - 1])
            except reply.Rejected as refusal:
                shown.append((size, refusal.problems))
    checked = [(text[:size], problems) for text, shown in refused for size, problems in shown]
    assert len({problems for _, problems in checked}) > 1
    for prefix, problems in checked:
        with pytest.raises(reply.Rejected) as refusal:
            reply.open(s).parse(prefix, partial=True)
        assert problems == refusal.value.problems, prefix
