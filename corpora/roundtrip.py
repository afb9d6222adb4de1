"""Round-trip replies: what the template itself writes for an assistant turn, read as a model's reply."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from chatparity.model import Message, Reply, ToolCall
from corpora.conversations import Conversation
from corpora.jinja_env import RENDER_ERRORS, error_text
from corpora.planning import PlannedSession, thinks
from corpora.prompts import Chat, chat, json_text, rendered
from corpora.tools import STANDARD_TOOLS
from corpora.turn_shapes import TURN_SHAPES, TurnShape
from corpora.turns import TurnText, strip_end_of_turn, turn_body

ORIGIN = "roundtrip"
PYTHON_LITERAL = re.compile(r"(?<=[>=:\s\[])(None|True|False)(?=\s*[<,)}\]])")
JSON_LITERAL = re.compile(r"(?<=[>=:\s\[])(null|true|false)(?=\s*[<,)}\]])")
JSON_LITERALS = {"None": "null", "True": "true", "False": "false"}
PYTHON_LITERALS = {json_literal: python for python, json_literal in JSON_LITERALS.items()}


@dataclass(frozen=True)
class RoundTripTurn:
    """A turn shape and what the template wrote for it (or why it can't be read back)."""

    shape: TurnShape
    turn: TurnText


def calls_fit(shape: TurnShape, planned: PlannedSession) -> bool:
    """Whether a shape calls only tools the session offers; in a typed-tools session, only the shapes that call
    its tools beyond the standard set (the others are the single-turn session's)."""
    offered = {tool["function"]["name"] for tool in planned.session.tool_defs}
    standard = {tool["function"]["name"] for tool in STANDARD_TOOLS}
    if not shape.tool_names <= offered:
        return False
    return planned.session.conversation != Conversation.TYPED_TOOLS.value or bool(shape.tool_names - standard)


def shapes_for(planned: PlannedSession) -> list[TurnShape]:
    """The turn shapes that fit a session: calls where tools are offered, reasoning when thinking."""
    mode = planned.session.mode
    return [
        shape
        for shape in TURN_SHAPES
        if mode.tools in shape.modes and (thinks(mode) or not shape.has_reasoning) and calls_fit(shape, planned)
    ]


def history_chat(planned: PlannedSession) -> Chat:
    """The session's history, tools and kwargs as a chat to render."""
    session = planned.session
    return chat(
        planned.entry, session.template_source, session.messages, session.tools, session.enable_thinking, session.kwargs
    )


def render_turns(planned: PlannedSession, assistant_messages: list[dict[str, Any]]) -> list[TurnText]:
    """What the template writes for each turn after the generation prompt, or None and why not."""
    if planned.session.prompt is None:
        failed = TurnText(None, f"jinja2 cannot render the session: {planned.jinja_error}")
        return [failed for _ in assistant_messages]
    history = history_chat(planned)
    return [turn_after(planned, history, message) for message in assistant_messages]


def render_turn(planned: PlannedSession, assistant_message: dict[str, Any]) -> TurnText:
    """What the template writes for the turn after the generation prompt, or None and why not."""
    return render_turns(planned, [assistant_message])[0]


def turn_after(planned: PlannedSession, history: Chat, assistant_message: dict[str, Any]) -> TurnText:
    """What the template writes for the turn after the session's history (its chat), or None and why not."""
    session = planned.session
    assert session.prompt is not None
    entry = planned.entry
    with_turn = dataclasses.replace(history, messages=json_text([*session.messages, assistant_message]))
    try:
        without = rendered(history, False)
        rendered_turn = rendered(with_turn, False)
    except RENDER_ERRORS as error:
        return TurnText(None, f"jinja2 cannot render the turn: {error_text(error)}")
    reasoning = assistant_message.get("reasoning_content") or ""
    if reasoning and reasoning not in rendered_turn:
        return TurnText(None, "the template drops the reasoning of the last turn")
    body = turn_body(
        without, session.prompt, rendered_turn, entry.think_start, entry.think_end, bool(reasoning), entry.eos
    )
    if body.text is None:
        return body
    text = body.text
    names = [call["function"]["name"] for call in assistant_message.get("tool_calls") or []]
    if any(name not in text for name in names):
        return TurnText(None, "the template does not write the turn's tool calls")
    content = assistant_message.get("content") or ""
    if content and content not in text:
        return TurnText(None, "the template does not write the turn's content")
    payload = [text.find(part) + len(part) for part in (reasoning, content) if part]
    payload += [text.rfind(name) + len(name) for name in names]
    return TurnText(strip_end_of_turn(text, entry.end_of_turn, max(payload, default=0)), body.reason)


def truth_of(message: dict[str, Any], text: str) -> Message:
    """The message a turn encodes; a call id only where the template wrote it."""
    calls = tuple(
        ToolCall(
            name=call["function"]["name"],
            arguments=json.dumps(call["function"]["arguments"], ensure_ascii=False),
            id=call["id"] if call["id"] in text else "",
        )
        for call in message.get("tool_calls") or []
    )
    return Message(
        content=message.get("content") or "",
        reasoning_content=message.get("reasoning_content") or "",
        tool_calls=calls,
    )


def roundtrip_turns(planned: PlannedSession) -> list[RoundTripTurn]:
    """Every fitting turn shape with what the template wrote for it or why it can't be read back."""
    shapes = shapes_for(planned)
    turns = render_turns(planned, [shape.message for shape in shapes])
    return [RoundTripTurn(shape, turn) for shape, turn in zip(shapes, turns, strict=True)]


def literal_variants(text: str) -> list[tuple[str, str, str]]:
    """Where a template writes a call's values as Python literals (None, True, False): the call with every
    literal as JSON's, and with every literal as Python's (its nested JSON values too), as models trained on
    either write it; each as (shape suffix, text, note)."""
    if not PYTHON_LITERAL.search(text):
        return []
    as_json = PYTHON_LITERAL.sub(lambda found: JSON_LITERALS[found.group()], text)
    as_python = JSON_LITERAL.sub(lambda found: PYTHON_LITERALS[found.group()], text)
    variants = [("_with_json_literals", as_json, "the template's Python literals written as JSON's")]
    if as_python != text:
        variants.append(("_with_python_literals", as_python, "the call's JSON literals written as Python's"))
    return variants


def roundtrip_replies(planned: PlannedSession) -> list[Reply]:
    """The readable round-trip replies (one per distinct text), truth = the message rendered; where a template
    writes a call's values as Python literals, also the call in JSON's literals and in Python's throughout."""
    replies: list[Reply] = []
    seen: set[str] = set()
    for item in roundtrip_turns(planned):
        text = item.turn.text
        if text is None or text in seen:
            continue
        seen.add(text)
        truth = truth_of(item.shape.message, text)
        replies.append(Reply(text, False, ORIGIN, item.shape.name, truth, item.turn.reason))
        for suffix, variant, note in literal_variants(text) if item.shape.has_calls else []:
            replies.append(Reply(variant, False, ORIGIN, item.shape.name + suffix, truth, note))
    return replies
