"""The multi-turn checks on hand-made prompts: append, its first differing offset and class, boundary."""

from __future__ import annotations

import dataclasses

from harness.multiturn_checks import Break, TurnPrompts, append_check, boundary_check

SYSTEM = "<|im_start|>system\nBe brief.<|im_end|>\n"
QUESTION = "<|im_start|>user\nWeather?<|im_end|>\n"
HEADER = "<|im_start|>assistant\n"
THOUGHT = "<think>\nRio first.\n</think>\n\n"
CALL = '<tool_call>\n{"name": "w", "arguments": {"city": "Rio"}}\n</tool_call>'
RESULT = "<|im_start|>user\n<tool_response>\nSunny.\n</tool_response><|im_end|>\n" + HEADER


def turn(reply: str, next_prompt: str, **fields: object) -> TurnPrompts:
    """A turn after the system prompt and the question, with Qwen-like tags."""
    base = TurnPrompts(
        prompt=SYSTEM + QUESTION + HEADER,
        generation_prompt=HEADER,
        reply=reply,
        next_prompt=next_prompt,
        reasoning="Rio first.",
        content="",
        has_calls=True,
        earlier_reasoning=(),
        system_text="Be brief.",
        next_text="Sunny.",
        think_start="<think>",
        think_end="</think>",
    )
    return dataclasses.replace(base, **fields)


def test_an_exact_append_with_one_turn_end_is_safe() -> None:
    """prompt + reply + <|im_end|> + the next message: append ok, boundary ok."""
    reply = THOUGHT + CALL
    checked = turn(reply, SYSTEM + QUESTION + HEADER + reply + "<|im_end|>\n" + RESULT)
    assert append_check(checked).ok
    assert boundary_check(checked, ("<|im_end|>",)).status == "ok"


def test_a_dropped_thought_breaks_at_the_thought() -> None:
    """The history turn without its thought: first difference at the thought's first byte."""
    reply = THOUGHT + CALL
    prompt = SYSTEM + QUESTION + HEADER
    checked = turn(reply, prompt + CALL + "<|im_end|>\n" + RESULT)
    found = append_check(checked)
    assert not found.ok
    assert found.offset == len(prompt) + 2  # both sides start with "<t"
    assert found.breaks is Break.THOUGHT_DROPPED


def test_reserialised_arguments_break_inside_the_call() -> None:
    """The history writes the call's JSON compactly: the break is in the call, after the thought."""
    reply = THOUGHT + CALL
    compact = CALL.replace('{"city": "Rio"}', '{"city":"Rio"}')
    prompt = SYSTEM + QUESTION + HEADER
    found = append_check(turn(reply, prompt + THOUGHT + compact + "<|im_end|>\n" + RESULT))
    assert found.breaks is Break.CALL_RESERIALISED
    assert found.offset == len(prompt) + len(THOUGHT) + CALL.index('{"city"') + len('{"city":')


def test_a_moved_system_prompt_breaks_before_the_turn() -> None:
    """The system prompt written after the question in the next prompt."""
    reply = CALL
    found = append_check(
        turn(reply, QUESTION + SYSTEM + HEADER + reply + "<|im_end|>\n" + RESULT, reasoning="")
    )
    assert found.breaks is Break.SYSTEM_MOVED
    assert found.offset == len("<|im_start|>")


def test_an_empty_thought_of_the_generation_prompt_dropped_from_history() -> None:
    """A generation prompt that closes an empty thought the history turn does not write."""
    empty = HEADER + "<think>\n\n</think>\n\n"
    prompt = SYSTEM + QUESTION + empty
    found = append_check(
        turn(
            CALL,
            SYSTEM + QUESTION + HEADER + CALL + "<|im_end|>\n" + RESULT,
            prompt=prompt,
            generation_prompt=empty,
            reasoning="",
        )
    )
    assert found.breaks is Break.EMPTY_THOUGHT_DROPPED
    assert found.offset == len(SYSTEM + QUESTION + HEADER) + 2  # "<think>" vs "<tool_call>"


def test_missing_and_doubled_turn_ends() -> None:
    """No turn end, or two, between the reply and the next message."""
    reply = THOUGHT + CALL
    head = SYSTEM + QUESTION + HEADER + reply
    missing = boundary_check(turn(reply, head + "\n" + RESULT), ("<|im_end|>",))
    doubled = boundary_check(turn(reply, head + "<|im_end|><|im_end|>\n" + RESULT), ("<|im_end|>",))
    assert (missing.status, missing.breaks, missing.offset) == ("missing", Break.STOP_MISSING, len(head))
    assert (doubled.status, doubled.count, doubled.breaks) == ("doubled", 2, Break.STOP_DOUBLED)
    assert boundary_check(turn(reply, head + RESULT), ()).status == "n/a"
