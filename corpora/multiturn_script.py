"""The three-turn conversations of the multi-turn check: what each reply means and what follows it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from chatparity.model import Message
from corpora.conversations import CALL_IDS, SYSTEM, call

FIRST_QUESTION = {"role": "user", "content": "What's the weather in Rio and in Oslo?"}
THANKS = {"role": "user", "content": "Thanks!"}
CITIES = ("Rio", "Oslo", "Lima")
TOOL_RESULTS = ("Sunny, 31 C.", "Cloudy, 12 C.", "Foggy, 18 C.")
TOOL_THOUGHTS = (
    "The user wants two forecasts; Rio first.",
    "Rio is done; now Oslo.",
    "Both forecasts are in; summarise them (or check Lima when a call is required).",
)
TOOL_ANSWER = "Rio is sunny at 31 C and Oslo is cloudy at 12 C."
TEXT_THOUGHTS = ("Rio is tropical.", "Oslo is northern.", "Compare the two.")
TEXT_ANSWERS = ("Rio is usually warm.", "Oslo is usually cool.", "Rio is warmer.")
TEXT_QUESTIONS = ("Is Oslo colder?", "Which one is warmer?", "Thanks!")


@dataclass(frozen=True)
class ScriptTurn:
    """One assistant turn as meant (without its thought) and the thought a thinking mode adds to it."""

    message: dict[str, Any]
    thought: str

    def meant(self, thinking: bool) -> dict[str, Any]:
        """The assistant message the reply should encode, with its thought when thinking."""
        return {**self.message, "reasoning_content": self.thought} if thinking else dict(self.message)


def tool_script(calls_only: bool) -> tuple[ScriptTurn, ...]:
    """A call for Rio, a call for Oslo, then the final answer (a third call when every turn must call)."""
    calls = [call("get_weather", {"city": city, "days": 2}, index) for index, city in enumerate(CITIES)]
    turns = [
        ScriptTurn({"role": "assistant", "content": "", "tool_calls": [each]}, thought)
        for each, thought in zip(calls, TOOL_THOUGHTS, strict=True)
    ]
    if calls_only:
        return tuple(turns)
    return (*turns[:2], ScriptTurn({"role": "assistant", "content": TOOL_ANSWER}, TOOL_THOUGHTS[2]))


def text_script() -> tuple[ScriptTurn, ...]:
    """Three text answers to three questions."""
    return tuple(
        ScriptTurn({"role": "assistant", "content": answer}, thought)
        for answer, thought in zip(TEXT_ANSWERS, TEXT_THOUGHTS, strict=True)
    )


def opening() -> list[dict[str, Any]]:
    """The history before the first reply: a system prompt and the first question."""
    return [dict(SYSTEM), dict(FIRST_QUESTION)]


def history_message(reading: Message) -> dict[str, Any]:
    """The parsed reply as a server puts it back into the history (missing call ids filled in order)."""
    message: dict[str, Any] = {"role": "assistant", "content": reading.content}
    if reading.reasoning_content:
        message["reasoning_content"] = reading.reasoning_content
    if reading.tool_calls:
        message["tool_calls"] = [
            {
                "id": each.id or CALL_IDS[index % len(CALL_IDS)],
                "type": "function",
                "function": {"name": each.name, "arguments": parsed_arguments(each.arguments)},
            }
            for index, each in enumerate(reading.tool_calls)
        ]
    return message


def parsed_arguments(arguments: str) -> Any:
    """Call arguments as an object when they are JSON, else the text as read."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def following(script_index: int, tools: bool, reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages after a reply: a tool result per call it made, else the next question."""
    calls = reply.get("tool_calls") or []
    if tools and calls:
        result = TOOL_RESULTS[min(script_index, len(TOOL_RESULTS) - 1)]
        return [
            {"role": "tool", "tool_call_id": each["id"], "name": each["function"]["name"], "content": result}
            for each in calls
        ]
    if tools:
        return [dict(THANKS)]
    return [{"role": "user", "content": TEXT_QUESTIONS[script_index]}]
