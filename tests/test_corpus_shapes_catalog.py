"""The shape corpora on the real upstream templates: per syntax, seeded, counted, and read by the oracle."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any

import pytest

from chatparity.model import REASONING_FORMAT, Message, Reading
from corpora import catalog
from corpora.call_shapes import CallShape
from corpora.catalog import SessionCorpus, session_corpus
from corpora.planning import PlannedSession
from templates.index import load_index

SHAPE_ORIGINS = {"thinking", "toolcall", "partial", "fuzz"}
TOOL_NAMES = ("get_weather", "create_event", "get_time", "run_code", "launch_rocket")
MARKERS = ("<think>", "</think>", "<tool_call>", "</tool_call>")
NO_OPENING = {"llama31", "functionary_v3_2", "gpt_oss", "muse_glimmer", "firefunction"}


@cache
def think_auto() -> dict[str, PlannedSession]:
    """The single-turn think/auto session of every template."""
    return {p.session.template: p for p in catalog.plan("quick", mode="think/auto")
            if p.session.conversation == "single"}


@cache
def full_corpus(template: str) -> SessionCorpus:
    """The full-profile corpus of one template's single-turn think/auto session."""
    return session_corpus(think_auto()[template], "full")


def shapes(corpus: SessionCorpus, origin: str) -> dict[str, Any]:
    """The replies of one origin by shape."""
    return {reply.shape: reply for reply in corpus.replies if reply.origin == origin}


def test_every_syntax_that_writes_calls_gets_the_composed_call_shapes() -> None:
    index = load_index()
    covered: set[str] = set()
    for name in think_auto():
        corpus = full_corpus(name)
        calls = shapes(corpus, "toolcall")
        if "text_after_call" not in calls:
            continue
        covered.add(index[name].syntax)
        for shape in (CallShape.TEXT_AFTER, CallShape.UNKNOWN_NAME, CallShape.PROSE_BEFORE, CallShape.MARKER_QUOTED,
                      CallShape.TWO_CALLS_ONE_UNKNOWN):
            assert shape.value in calls, (name, shape)
        assert "launch_rocket" in calls["unknown_tool_name"].text and "get_weather" not in calls["unknown_tool_name"].text
        skipped = {skip.shape: skip.reason for skip in corpus.skips}
        if index[name].syntax in NO_OPENING:
            assert skipped["call_without_opening_wrapper"] == "the written call has no opening marker"
        else:
            assert "call_without_opening_wrapper" in calls, name
    assert len(covered) >= 30, sorted(covered)


def test_templates_that_never_write_calls_get_hand_written_calls_or_a_reason() -> None:
    lfm2 = shapes(full_corpus("LFM2-8B-A1B.jinja"), "toolcall")
    assert lfm2["text_after_call"].text.startswith('<|tool_call_start|>[get_weather(city="Rio", days=4)]')
    assert all("hand-written" in reply.note for reply in lfm2.values() if reply.shape != "prose_before_call")
    smol = full_corpus("HuggingFaceTB-SmolLM3-3B.jinja")
    assert not shapes(smol, "toolcall")
    assert {skip.reason for skip in smol.skips if skip.origin == "toolcall"} == {
        "the template does not write the turn's tool calls"}


def test_thinking_shapes_use_the_templates_own_tags_or_record_a_skip() -> None:
    gpt = shapes(full_corpus("openai-gpt-oss-120b.jinja"), "thinking")
    assert gpt["leading_thought"].text.startswith("<|channel|>analysis<|message|>")
    assert "<|end|>" in gpt["leading_thought"].text
    qwen25 = full_corpus("Qwen-Qwen2.5-7B-Instruct.jinja")
    assert not shapes(qwen25, "thinking")
    assert {skip.reason for skip in qwen25.skips if skip.origin == "thinking"} == {"the template has no thinking tags"}


def test_a_prompt_that_opens_a_thought_starts_every_shape_inside_it() -> None:
    planned = think_auto()["Qwen3.5-4B.jinja"]
    assert planned.opens_thought
    thoughts = shapes(full_corpus("Qwen3.5-4B.jinja"), "thinking")
    assert thoughts["leading_thought"].text.startswith("The user asks")
    assert thoughts["leading_thought"].truth.reasoning_content.startswith("The user asks")
    assert thoughts["no_thought"].text.startswith("</think>")
    assert not any(reply.text.startswith("<think>") for reply in thoughts.values())


def test_partial_cuts_are_prefixes_at_marked_points() -> None:
    corpus = full_corpus("Qwen-Qwen3-0.6B.jinja")
    finished = {f"{r.origin}:{r.shape}": r.text for r in corpus.replies if not r.partial}
    cuts = [r for r in corpus.replies if r.origin == "partial"]
    assert cuts and all(r.partial for r in cuts)
    points = Counter(r.shape.rsplit("@", 1)[1] for r in cuts)
    assert set(points) == {"in_marker", "after_marker", "in_thought", "in_call_marker", "after_call_marker",
                           "in_call_name", "in_arguments", "past_argument_value",
                           "in_whitespace_before_closing_tag", "in_closing_tag_after_whitespace"}
    for reply in cuts:
        source, point = reply.shape.rsplit("@", 1)
        assert finished[source].startswith(reply.text) and reply.text != finished[source]
        if point == "in_call_name":
            tail = reply.text.rsplit('"', 1)[1]
            assert tail and any(name.startswith(tail) and name != tail for name in TOOL_NAMES), reply.text
        if point in ("after_marker", "after_call_marker"):
            assert any(reply.text.endswith(marker) for marker in MARKERS), reply.text
        if point == "in_whitespace_before_closing_tag":
            assert reply.text[-1].isspace() and finished[source][len(reply.text):].lstrip().startswith("</"), reply.text


def test_same_seed_same_corpus_other_seed_other_fuzz() -> None:
    planned = think_auto()["GLM-4.6.jinja"]
    first = session_corpus(planned, "quick", seed=7)
    again = session_corpus(catalog.plan("quick", templates="GLM-4.6.jinja", mode="think/auto")[0], "quick", seed=7)
    other = session_corpus(planned, "quick", seed=8)
    assert [(r.origin, r.shape, r.text, r.partial) for r in first.replies] == \
        [(r.origin, r.shape, r.text, r.partial) for r in again.replies]
    fuzz = [r for r in first.replies if r.origin == "fuzz"]
    other_fuzz = [r for r in other.replies if r.origin == "fuzz"]
    assert fuzz and all("seed=7" in r.shape for r in fuzz) and all("seed=8" in r.shape for r in other_fuzz)
    assert [r.text for r in fuzz] != [r.text for r in other_fuzz]
    assert [r.text for r in first.replies if r.origin != "fuzz"] == [r.text for r in other.replies if r.origin != "fuzz"]


def test_counts_follow_the_product_rule() -> None:
    planned = catalog.plan("quick", templates="Qwen-Qwen3-0.6B.jinja")
    by_conversation = Counter(p.session.conversation for p in planned)
    assert by_conversation["single"] == len({p.session.mode.label for p in planned})
    for each in planned:
        origins = {reply.origin for reply in catalog.replies(each, "quick")}
        if each.session.conversation == "single":
            assert SHAPE_ORIGINS <= origins and len(catalog.replies(each, "quick")) <= 43
        else:
            assert origins == {"roundtrip"}
    counts = catalog.count(planned, "quick")
    assert counts.templates == 1 and counts.sessions == len(planned)
    assert counts.total == sum(len(catalog.replies(p, "quick")) for p in planned)
    assert set(counts.replies) == SHAPE_ORIGINS | {"roundtrip"}
    full = catalog.count(catalog.plan("full", templates="Qwen-Qwen3-0.6B.jinja", mode="think/auto"), "full")
    single_quick = catalog.count([p for p in planned if p.session.mode.label == "think/auto"
                                  and p.session.conversation == "single"], "quick")
    single_full = catalog.count(catalog.plan("full", templates="Qwen-Qwen3-0.6B.jinja", mode="think/auto")[:1], "full")
    assert full.sessions == 5 and single_full.total > single_quick.total


def test_quick_profile_has_unwrapped_values_and_an_unknown_parameter_with_truth() -> None:
    qwen35 = shapes(session_corpus(think_auto()["Qwen3.5-4B.jinja"], "quick"), "toolcall")
    unwrapped = qwen35["argument_values_not_wrapped_in_newlines"]
    assert "<parameter=city>Rio</parameter>" in unwrapped.text and "<parameter=days>4</parameter>" in unwrapped.text
    assert unwrapped.truth is not None
    assert [(c.name, json.loads(c.arguments)) for c in unwrapped.truth.tool_calls] == [
        ("get_weather", {"city": "Rio", "days": 4})]
    for name in ("Qwen3.5-4B.jinja", "Qwen-Qwen3-0.6B.jinja"):
        extra = shapes(session_corpus(think_auto()[name], "quick"), "toolcall")["parameter_not_in_schema"]
        assert "units" in extra.text and "metric" in extra.text and extra.truth is not None, name
        assert [json.loads(c.arguments) for c in extra.truth.tool_calls] == [
            {"city": "Rio", "days": 4, "units": "metric"}], name
    qwen3 = session_corpus(think_auto()["Qwen-Qwen3-0.6B.jinja"], "quick")
    assert {skip.shape: skip.reason for skip in qwen3.skips}["argument_values_not_wrapped_in_newlines"] == \
        "the template does not wrap argument values in newlines"


def comparable(reading: Reading) -> Any:
    """A reading with arguments compared as parsed JSON and ids left out."""
    if not isinstance(reading, Message):
        return reading
    return (reading.content, reading.reasoning_content,
            [(call.name, json.loads(call.arguments)) for call in reading.tool_calls])


PROBES = {"text_after_call", "argument_values_not_wrapped_in_newlines", "parameter_not_in_schema",
          "whitespace_before_closing_tag"}  # truth by meaning, which llama.cpp may refuse: its refusals are oracle defects


@pytest.mark.oracle
@pytest.mark.parametrize("template", [
    "Qwen-Qwen3-0.6B.jinja", "GLM-4.6.jinja", "deepseek-ai-DeepSeek-V3.1.jinja", "Qwen3-Coder.jinja",
    "moonshotai-Kimi-K2.jinja", "MiniMax-M2.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "openai-gpt-oss-120b.jinja", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
])
def test_the_oracle_reads_shapes_with_truth_back_to_it(oracle: Any, template: str) -> None:
    checked = 0
    for planned in catalog.plan("full", templates=template, mode="*/[anr]*"):
        if planned.session.conversation != "single" or planned.session.mode.kwargs or \
                planned.session.reasoning_format != REASONING_FORMAT:
            continue
        handle = oracle.render(planned.session.render_request()).handle
        for reply in catalog.replies(planned, "full"):
            if reply.truth is None or reply.origin not in {"thinking", "toolcall"} or reply.shape in PROBES:
                continue
            assert comparable(oracle.parse(handle, reply.text)) == comparable(reply.truth), (
                planned.session.mode.label, reply.shape, reply.text)
            checked += 1
    assert checked >= 3
