"""Modes and sessions: what the oracle renders once and every reply of a case is read under."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

PINNED_NOW = "2025-06-15T10:30:00Z"
REASONING_FORMAT = "deepseek"


class ToolMode(str, Enum):
    """How tools are offered: none, auto, required, parallel (auto + parallel calls), choice_none."""

    NONE = "none"
    AUTO = "auto"
    REQUIRED = "required"
    PARALLEL = "parallel"
    CHOICE_NONE = "choice_none"

    @property
    def offers_tools(self) -> bool:
        """Whether tools are sent with the request."""
        return self is not ToolMode.NONE

    @property
    def tool_choice(self) -> str:
        """The OpenAI tool_choice this mode sends."""
        return {ToolMode.REQUIRED: "required", ToolMode.CHOICE_NONE: "none"}.get(self, "auto")

    @property
    def parallel_tool_calls(self) -> bool:
        """Whether parallel tool calls are allowed."""
        return self is ToolMode.PARALLEL


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces, the form every stable hash is taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(*parts: Any) -> str:
    """A short stable hex id of JSON-able parts."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Mode:
    """Thinking on/off × the template's own kwargs × a tool mode."""

    thinking: bool
    tools: ToolMode
    kwargs: tuple[tuple[str, Any], ...] = ()

    @property
    def kwargs_dict(self) -> dict[str, Any]:
        """The chat_template_kwargs as a dict."""
        return dict(self.kwargs)

    @property
    def label(self) -> str:
        """A short readable name, e.g. `think/auto` or `nothink/none/reasoning_effort=high`."""
        parts = ["think" if self.thinking else "nothink", self.tools.value]
        parts += [f"{key}={canonical_json(value)}" for key, value in self.kwargs]
        return "/".join(parts)


@dataclass(frozen=True)
class Session:
    """One template rendered under one mode and one conversation: the context every reply is read in."""

    template: str
    template_source: str = field(repr=False)
    template_sha256: str
    bos: str
    eos: str
    mode: Mode
    conversation: str
    messages: tuple[dict[str, Any], ...] = field(repr=False)
    tool_defs: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    prompt: str | None = field(default=None, repr=False, compare=False)
    now: str = PINNED_NOW
    reasoning_format: str = REASONING_FORMAT

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI tools sent with the request ([] when the mode offers none)."""
        return list(self.tool_defs) if self.mode.tools.offers_tools else []

    @property
    def tool_choice(self) -> str:
        """The request's tool_choice."""
        return self.mode.tools.tool_choice

    @property
    def parallel_tool_calls(self) -> bool:
        """The request's parallel_tool_calls."""
        return self.mode.tools.parallel_tool_calls

    @property
    def enable_thinking(self) -> bool:
        """The request's enable_thinking."""
        return self.mode.thinking

    @property
    def kwargs(self) -> dict[str, Any]:
        """The request's chat_template_kwargs."""
        return self.mode.kwargs_dict

    @property
    def id(self) -> str:
        """A stable hash of what the session is made of."""
        return stable_hash(
            self.template, self.template_sha256, self.mode.label, self.conversation, list(self.messages),
            self.tools, self.now, self.reasoning_format,
        )

    def render_request(self) -> dict[str, Any]:
        """The oracle `render` request fields for this session."""
        return {
            "template": self.template_source,
            "bos": self.bos,
            "eos": self.eos,
            "messages": list(self.messages),
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "enable_thinking": self.enable_thinking,
            "reasoning_format": self.reasoning_format,
            "chat_template_kwargs": self.kwargs,
            "add_generation_prompt": True,
            "now": self.now,
        }
