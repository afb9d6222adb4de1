"""Round-trip replies: each template's own assistant turns, read back by llama.cpp to their truth."""

from __future__ import annotations

import json
from typing import Any

from chatparity.model import REASONING_FORMAT, Message, Reading, ToolMode
from corpora.planning import PlannedSession, plan
from corpora.roundtrip import render_turn, roundtrip_replies, roundtrip_turns
from corpora.turn_shapes import CODE, TURN_SHAPES
from templates.index import load_index

SHAPES = {shape.name: shape.message for shape in TURN_SHAPES}
READ_BACK_MODES = (ToolMode.NONE, ToolMode.AUTO, ToolMode.REQUIRED, ToolMode.CHOICE_NONE)
NAMED = (
    "Qwen-Qwen3-0.6B.jinja",
    "Qwen3-Coder.jinja",
    "GLM-4.6.jinja",
    "deepseek-ai-DeepSeek-V3.1.jinja",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "openai-gpt-oss-120b.jinja",
)


def session(template: str, label: str, conversation: str = "single") -> PlannedSession:
    """The planned quick-profile session of a template, mode label and conversation."""
    return next(
        item
        for item in plan("quick", templates=template, mode=label)
        if item.session.conversation == conversation
    )


def mismatch(reading: Reading, truth: Message) -> str:
    """'' when a reading carries the truth (text fields without surrounding whitespace, arguments as parsed
    JSON, ids where the truth has one), else the first difference."""
    if not isinstance(reading, Message):
        return f"rejected: {reading.reason}"
    for field in ("content", "reasoning_content"):
        if getattr(reading, field).strip() != getattr(truth, field).strip():
            return f"{field}: {getattr(reading, field)!r} vs {getattr(truth, field)!r}"
    if len(reading.tool_calls) != len(truth.tool_calls):
        return f"tool_calls: {len(reading.tool_calls)} vs {len(truth.tool_calls)}"
    for index, (got, want) in enumerate(zip(reading.tool_calls, truth.tool_calls)):
        if got.name != want.name or (want.id and got.id != want.id):
            return f"tool_calls[{index}]: {got} vs {want}"
        try:
            arguments: Any = json.loads(got.arguments)
        except ValueError:
            return f"tool_calls[{index}].arguments not JSON: {got.arguments!r}"
        if arguments != json.loads(want.arguments):
            return f"tool_calls[{index}].arguments: {got.arguments} vs {want.arguments}"
    return ""


def test_reply_ends_before_the_end_of_turn_marker() -> None:
    turn = render_turn(session("Qwen-Qwen3-0.6B.jinja", "think/auto"), SHAPES["one_call"])
    assert turn.text is not None and turn.text.startswith("<think>") and turn.text.endswith("</tool_call>")
    assert "<|im_end|>" not in turn.text
    llama = render_turn(session("meta-llama-Llama-3.1-8B-Instruct.jinja", "think/auto"), SHAPES["content"])
    assert llama.text == SHAPES["content"]["content"]


def test_reply_starts_inside_an_open_thought() -> None:
    bielik = session("Bielik-11B-v3.0-Instruct.jinja", "think/auto")
    assert bielik.opens_thought
    reasoning = render_turn(bielik, SHAPES["reasoning_content"])
    assert reasoning.text is not None and reasoning.text.startswith(
        SHAPES["reasoning_content"]["reasoning_content"]
    )
    qwq = session("Qwen-QwQ-32B.jinja", "think/auto")
    assert qwq.opens_thought
    content = render_turn(qwq, SHAPES["content"])
    assert content.text is not None and content.text.startswith("</think>") and "closed" in content.reason


def test_gpt_oss_writes_the_reasoning_llama_cpp_hands_it_as_thinking() -> None:
    turn = render_turn(session("openai-gpt-oss-120b.jinja", "think/auto"), SHAPES["reasoning_call"])
    reasoning = SHAPES["reasoning_call"]["reasoning_content"]
    assert turn.text is not None and f"<|channel|>analysis<|message|>{reasoning}<|end|>" in turn.text


def test_unreadable_turns_carry_their_reason() -> None:
    smol = render_turn(session("HuggingFaceTB-SmolLM3-3B.jinja", "think/auto"), SHAPES["one_call"])
    assert smol.text is None and "does not write the turn's tool calls" in smol.reason
    apertus = render_turn(session("Apertus-8B-Instruct.jinja", "think/auto"), SHAPES["reasoning_content"])
    assert apertus.text is None and "drops the reasoning" in apertus.reason
    command_r_plus = render_turn(
        session("CohereForAI-c4ai-command-r-plus-tool_use.jinja", "think/auto"), SHAPES["content"]
    )
    assert command_r_plus.text is None and command_r_plus.reason.startswith("jinja2 cannot render the session")


def test_replies_fit_the_mode_and_carry_truth() -> None:
    auto = {reply.shape: reply for reply in roundtrip_replies(session("Qwen3-Coder.jinja", "think/auto"))}
    assert set(auto) == {
        "content",
        "reasoning_content",
        "one_call",
        "code_call",
        "reasoning_call",
        "no_args_call",
    } - {"reasoning_content", "reasoning_call"}
    assert json.loads(auto["code_call"].truth.tool_calls[0].arguments)["code"] == CODE
    assert all(reply.origin == "roundtrip" and not reply.partial for reply in auto.values())
    none = {reply.shape for reply in roundtrip_replies(session("Qwen3-Coder.jinja", "nothink/none"))}
    assert none == {"content"}
    parallel = {
        reply.shape for reply in roundtrip_replies(session("Qwen-Qwen3-0.6B.jinja", "think/parallel"))
    }
    assert "two_calls" in parallel and "reasoning_call" in parallel


def test_call_ids_are_truth_only_where_the_template_writes_them() -> None:
    nemo = {
        reply.shape: reply
        for reply in roundtrip_replies(session("mistralai-Mistral-Nemo-Instruct-2407.jinja", "nothink/auto"))
    }
    assert nemo["one_call"].truth.tool_calls[0].id == SHAPES["one_call"]["tool_calls"][0]["id"]
    qwen = {
        reply.shape: reply for reply in roundtrip_replies(session("Qwen-Qwen3-0.6B.jinja", "nothink/auto"))
    }
    assert qwen["one_call"].truth.tool_calls[0].id == ""


def test_replies_are_deterministic_and_distinct() -> None:
    planned = plan("quick", templates="deepseek-ai-*")
    first = [(reply.text, reply.truth) for item in planned for reply in roundtrip_replies(item)]
    second = [(reply.text, reply.truth) for item in planned for reply in roundtrip_replies(item)]
    assert first == second
    for item in planned:
        texts = [reply.text for reply in roundtrip_replies(item)]
        assert len(texts) == len(set(texts))


def test_oracle_reads_round_trips_back_to_truth(oracle: Any) -> None:
    """Done when: at least 55 templates that write tool calls read back every round-trip reply of their
    single-turn sessions (thinking on/off, tool modes none/auto/required/choice_none, no kwargs, llama-server's
    default reasoning format)."""
    writers = sorted(name for name, entry in load_index().items() if entry.writes_calls)
    failures: dict[str, list[str]] = {}
    replies = 0
    for item in plan("quick", templates="*"):
        session_ = item.session
        if (
            session_.template not in writers
            or session_.conversation != "single"
            or session_.mode.kwargs
            or session_.reasoning_format != REASONING_FORMAT
            or session_.mode.tools not in READ_BACK_MODES
        ):
            continue
        render = oracle.render(session_.render_request())
        for reply in roundtrip_replies(item):
            replies += 1
            difference = mismatch(oracle.parse(render.handle, reply.text), reply.truth)
            if difference:
                failures.setdefault(session_.template, []).append(
                    f"{session_.mode.label} {reply.shape}: {difference}"
                )
    passing = [name for name in writers if name not in failures]
    report = "\n".join(f"{name}: {lines[0]} (+{len(lines) - 1})" for name, lines in sorted(failures.items()))
    assert replies > 1000
    assert len(passing) >= 55, report
    assert set(NAMED) <= set(passing), report


def test_every_unreadable_turn_is_listed_with_a_reason() -> None:
    for item in plan("quick", templates="Kimi-*"):
        turns = roundtrip_turns(item)
        assert all(turn.turn.reason for turn in turns if turn.turn.text is None)
        readable = {turn.turn.text for turn in turns if turn.turn.text is not None}
        assert {reply.text for reply in roundtrip_replies(item)} == readable
