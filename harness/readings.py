"""Readings: what a parser makes of a reply, a message or a rejection."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call: its name, its arguments as JSON text, and its id ("" when none)."""

    name: str
    arguments: str
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        """This call as a plain dict."""
        return {"name": self.name, "arguments": self.arguments, "id": self.id}


@dataclass(frozen=True)
class Message:
    """A parsed assistant message: reasoning, content and tool calls."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """This message as a plain dict."""
        return {
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": [call.to_json() for call in self.tool_calls],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        """A message from the dict `to_json` writes (missing fields are empty)."""
        calls = tuple(
            ToolCall(
                name=call.get("name", ""),
                arguments=call.get("arguments", "") if isinstance(call.get("arguments", ""), str)
                else json.dumps(call.get("arguments"), ensure_ascii=False),
                id=call.get("id", "") or "",
            )
            for call in data.get("tool_calls") or []
        )
        return cls(
            content=data.get("content") or "",
            reasoning_content=data.get("reasoning_content") or "",
            tool_calls=calls,
        )

    @classmethod
    def of(cls, obj: Any) -> Message:
        """A message from any object with content, reasoning_content and tool_calls attributes."""
        calls = tuple(
            ToolCall(name=call.name, arguments=call.arguments, id=getattr(call, "id", "") or "")
            for call in getattr(obj, "tool_calls", ()) or ()
        )
        return cls(
            content=getattr(obj, "content", "") or "",
            reasoning_content=getattr(obj, "reasoning_content", "") or "",
            tool_calls=calls,
        )


@dataclass(frozen=True)
class Rejection:
    """A parser's refusal of a reply (llama.cpp throws for a finished reply off its format)."""

    reason: str

    def to_json(self) -> dict[str, Any]:
        """This rejection as a plain dict."""
        return {"rejected": self.reason}


Reading = Message | Rejection


def reading_to_json(reading: Reading) -> dict[str, Any]:
    """A reading as a plain dict: a message's fields, or {"rejected": reason}."""
    return reading.to_json()


def reading_from_json(data: dict[str, Any]) -> Reading:
    """A reading from the dict `reading_to_json` writes."""
    if "rejected" in data:
        return Rejection(data["rejected"])
    return Message.from_json(data)
