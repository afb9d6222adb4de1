"""The standard tool set offered to every session that offers tools (OpenAI function format)."""

from __future__ import annotations

from typing import Any


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAI tool definition."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


GET_WEATHER = _function(
    "get_weather",
    "Get the weather forecast for a city.",
    {
        "city": {"type": "string", "description": "The city name."},
        "days": {"type": "integer", "description": "How many days to forecast."},
    },
    ["city"],
)

CREATE_EVENT = _function(
    "create_event",
    "Create a calendar event.",
    {
        "event": {
            "type": "object",
            "description": "The event.",
            "properties": {
                "title": {"type": "string"},
                "place": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "room": {"type": "integer"}},
                },
            },
            "required": ["title"],
        },
        "attendees": {"type": "array", "items": {"type": "string"}, "description": "Who attends."},
    },
    ["event", "attendees"],
)

GET_TIME = _function("get_time", "Get the current time.", {}, [])

RUN_CODE = _function(
    "run_code",
    "Run a program and return what it prints.",
    {
        "language": {"type": "string", "description": "The language."},
        "code": {"type": "string", "description": "The source code."},
    },
    ["language", "code"],
)

STANDARD_TOOLS: tuple[dict[str, Any], ...] = (GET_WEATHER, CREATE_EVENT, GET_TIME, RUN_CODE)
