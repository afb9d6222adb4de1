"""The conversations a session renders before the reply, and the call ids they carry."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

CALL_IDS = ("Xq7Tz2Lp9", "Bm4Rw8Kc1", "Hn3Vy6Ds5")


class Conversation(str, Enum):
    """The message history before the reply."""

    SINGLE = "single"
    SYSTEM = "system"
    AFTER_TOOL = "after_tool"
    AFTER_REASONING = "after_reasoning"
    TYPED_TOOLS = "typed_tools"


USER = {"role": "user", "content": "What's the weather in Rio?"}
SYSTEM = {"role": "system", "content": "You are a concise assistant."}


def call(name: str, arguments: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """An OpenAI tool call, arguments as an object, with a 9-character alphanumeric id (Mistral's rule)."""
    return {"id": CALL_IDS[index], "type": "function", "function": {"name": name, "arguments": arguments}}


def messages(conversation: Conversation) -> tuple[dict[str, Any], ...]:
    """The messages of a conversation."""
    if conversation in (Conversation.SINGLE, Conversation.TYPED_TOOLS):
        return (USER,)
    if conversation is Conversation.SYSTEM:
        return (SYSTEM, USER)
    if conversation is Conversation.AFTER_TOOL:
        return (
            USER,
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("get_weather", {"city": "Rio", "days": 2})],
            },
            {
                "role": "tool",
                "tool_call_id": CALL_IDS[0],
                "name": "get_weather",
                "content": json.dumps({"forecast": "sunny", "max_c": 31}),
            },
        )
    return (
        USER,
        {
            "role": "assistant",
            "reasoning_content": "Rio is warm in June; no tool is needed for a rough answer.",
            "content": "It is usually warm and dry.",
        },
        {"role": "user", "content": "And in Oslo?"},
    )
