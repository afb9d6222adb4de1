"""The assistant turns a round trip renders: each message, and the tool modes it fits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatparity.model import ToolMode
from corpora.conversations import call
from corpora.tools import (
    GUEST,
    GUEST_SITE,
    MEAL_ORDER,
    PREFIXED_TRIP,
    STRICT_TRIP,
    TUPLE_TRIP,
    TYPED_TRIP,
    TYPELESS_TRIP,
    UNTYPED_TRIP,
)

CONTENT = "It is sunny in Rio today, 31 °C."
REASONING = "The user asks about Rio. The forecast says sunny, so I answer directly."
CODE = 'def f(x):\n    return {"a": [x, \'é\']}\n\nprint(f("雨 {"), "\\"quoted\\"")'

CALL_MODES = (ToolMode.AUTO, ToolMode.REQUIRED, ToolMode.PARALLEL)
TEXT_MODES = (ToolMode.NONE, ToolMode.AUTO, ToolMode.PARALLEL, ToolMode.CHOICE_NONE)


@dataclass(frozen=True)
class TurnShape:
    """A named assistant turn, the tool modes it is rendered under, and whether it carries reasoning."""

    name: str
    message: dict[str, Any]
    modes: tuple[ToolMode, ...]

    @property
    def has_reasoning(self) -> bool:
        """Whether the turn carries reasoning (rendered only when thinking is on)."""
        return bool(self.message.get("reasoning_content"))

    @property
    def has_calls(self) -> bool:
        """Whether the turn carries tool calls."""
        return bool(self.message.get("tool_calls"))

    @property
    def tool_names(self) -> set[str]:
        """The names of the tools the turn calls."""
        return {each["function"]["name"] for each in self.message.get("tool_calls", [])}


def _assistant(
    content: str = "", reasoning: str = "", calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An assistant message."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return message


WEATHER = call("get_weather", {"city": "Rio", "days": 4})
EVENT = call(
    "create_event",
    {"event": {"title": "Beach", "place": {"city": "Rio", "room": 2}}, "attendees": ["Ana", "Bo"]},
    1,
)

TURN_SHAPES: tuple[TurnShape, ...] = (
    TurnShape("content", _assistant(CONTENT), TEXT_MODES),
    TurnShape("reasoning_content", _assistant(CONTENT, REASONING), TEXT_MODES),
    TurnShape("one_call", _assistant(calls=[WEATHER]), CALL_MODES),
    TurnShape("two_calls", _assistant(calls=[WEATHER, EVENT]), (ToolMode.PARALLEL,)),
    TurnShape(
        "code_call", _assistant(calls=[call("run_code", {"language": "python", "code": CODE})]), CALL_MODES
    ),
    TurnShape("reasoning_call", _assistant(reasoning=REASONING, calls=[WEATHER]), CALL_MODES),
    TurnShape("no_args_call", _assistant(calls=[call("get_time", {})]), CALL_MODES),
    TurnShape("typed_call", _assistant(calls=[call("book_trip", TYPED_TRIP)]), CALL_MODES),
    TurnShape("strictly_typed_call", _assistant(calls=[call("book_trip", STRICT_TRIP)]), CALL_MODES),
    TurnShape("referenced_schema_call", _assistant(calls=[call("order_meal", MEAL_ORDER)]), CALL_MODES),
    TurnShape("untyped_schema_call", _assistant(calls=[call("book_trip", UNTYPED_TRIP)]), CALL_MODES),
    TurnShape("tuple_schema_call", _assistant(calls=[call("book_trip", TUPLE_TRIP)]), CALL_MODES),
    TurnShape("typeless_schemas_call", _assistant(calls=[call("book_trip", TYPELESS_TRIP)]), CALL_MODES),
    TurnShape("prefixed_name_call", _assistant(calls=[call("book_trip", PREFIXED_TRIP)]), CALL_MODES),
    TurnShape("typeless_bounds_call", _assistant(calls=[call("check_in", GUEST)]), CALL_MODES),
    TurnShape("unknown_format_call", _assistant(calls=[call("check_in", GUEST_SITE)]), CALL_MODES),
)
