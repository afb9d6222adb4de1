"""Written turns: what a session's template writes, as a reply, for the assistant turns the shapes are cut from."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from chatparity.model import ToolMode
from corpora.call_shapes import ToolSet, Turn, Written, split_call, turn_message
from corpora.conversations import Conversation
from corpora.planning import PlannedSession, plan_session
from corpora.roundtrip import render_turns
from corpora.thinking_shapes import tags_argument
from corpora.turns import TurnText


def python_value(value: Any) -> str:
    """A value as a pythonic call writes it (JSON literals, which LFM2 reads)."""
    return json.dumps(value, ensure_ascii=False)


def lfm2_calls(calls: list[dict[str, Any]]) -> str:
    """Calls in LFM2's pythonic list between its call markers."""
    items = [
        f"{c['function']['name']}("
        + ", ".join(f"{key}={python_value(value)}" for key, value in c["function"]["arguments"].items()) + ")"
        for c in calls
    ]
    return f"<|tool_call_start|>[{', '.join(items)}]<|tool_call_end|>"


def granite_calls(calls: list[dict[str, Any]]) -> str:
    """Calls as the Granite 3.3 system prompt describes them."""
    items = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in calls]
    return "<|tool_call|>" + json.dumps(items, ensure_ascii=False)


def deepseek_v3_calls(calls: list[dict[str, Any]]) -> str:
    """Calls as the DeepSeek R1 templates write them: a fenced JSON block per call inside the call markers."""
    items = [
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{c['function']['name']}\n```json\n"
        f"{json.dumps(c['function']['arguments'], ensure_ascii=False)}\n```<｜tool▁call▁end｜>"
        for c in calls
    ]
    return "<｜tool▁calls▁begin｜>" + "\n".join(items) + "<｜tool▁calls▁end｜>"


HAND_SYNTAXES: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "lfm2": lfm2_calls, "granite": granite_calls, "deepseek_v3": deepseek_v3_calls,
}


def hand_written(planned: PlannedSession, message: dict[str, Any]) -> str | None:
    """A call turn written by hand in the template's known syntax, or None when the syntax has no encoder."""
    encode = HAND_SYNTAXES.get(planned.entry.syntax)
    if encode is None or "tool_calls" not in message:
        return None
    head = planned.entry.think_end if planned.opens_thought else ""
    return head + message.get("content", "") + encode(message["tool_calls"])


def offering_tools(planned: PlannedSession) -> PlannedSession:
    """The same session planned with tools offered (some templates write calls only when tools are offered)."""
    session = planned.session
    mode = dataclasses.replace(session.mode, tools=ToolMode.AUTO)
    return plan_session(planned.entry, session.template_source, mode, Conversation(session.conversation))


def write(planned: PlannedSession, messages: list[dict[str, Any]]) -> list[Written]:
    """The text the template writes for each assistant turn, by its own rendering (with tools offered when the
    session offers none and that fails) or, failing that, by hand."""
    turns = render_turns(planned, messages)
    failed = [index for index, turn in enumerate(turns) if turn.text is None]
    if failed and not planned.session.mode.tools.offers_tools:
        retried = render_turns(offering_tools(planned), [messages[index] for index in failed])
        for index, turn in zip(failed, retried, strict=True):
            turns[index] = turn
    return [written(planned, message, turn) for message, turn in zip(messages, turns, strict=True)]


def written(planned: PlannedSession, message: dict[str, Any], turn: TurnText) -> Written:
    """A turn as the template rendered it or, failing that, by hand."""
    if turn.text is not None:
        return Written(message, turn.text, turn.reason)
    hand = hand_written(planned, message)
    if hand is not None:
        return Written(message, hand, turn.reason, hand=True)
    return Written(message, None, turn.reason)


def quoted_prose(think_end: str, opening: str) -> str:
    """Prose that quotes a thinking end tag and a call opening in backticks."""
    return f"Use `{think_end or '</think>'}` to end a thought and `{opening or '<tool_call>'}` to start a call."


def written_turns(planned: PlannedSession, tools: ToolSet, turns: tuple[Turn, ...]) -> dict[Turn, Written]:
    """What the template writes for each of the given turns (the plain call first: the others quote it)."""
    entry = planned.entry
    tag_code = tags_argument(entry.think_start or "<think>", entry.think_end or "</think>")
    out: dict[Turn, Written] = {}
    one = write(planned, [turn_message(Turn.ONE_CALL, tools, "", tag_code) or {}])[0]
    out[Turn.ONE_CALL] = one
    opening = ""
    if one.text is not None:
        split = split_call(one.text, tools.weather, entry.think_end, tuple(entry.markers))
        opening = "" if isinstance(split, str) else split.opening
    quoted = quoted_prose(entry.think_end, opening)
    messages = {turn: turn_message(turn, tools, quoted, tag_code) for turn in turns if turn not in out}
    offered = {turn: message for turn, message in messages.items() if message is not None}
    texts = dict(zip(offered, write(planned, list(offered.values())), strict=True))
    for turn in messages:
        out[turn] = texts.get(turn) or Written({}, None, "the tool set has no tool for this turn")
    return out
