"""The values a reader returns: messages, tool calls, problems, and the two refusals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import chatparity.model as protocol


class Problem(str, Enum):
    """Something off about a reply, reported beside the message (never instead of it)."""

    NO_ACTION = "no_action"
    MULTIPLE_ACTIONS = "multiple_actions"
    PROSE_BEFORE_ACTION = "prose_before_action"
    TEXT_AFTER_ACTION = "text_after_action"
    UNCLOSED_THINK = "unclosed_think"
    BAD_SYNTAX = "bad_syntax"
    UNKNOWN_ACTION = "unknown_action"
    BAD_ARGS = "bad_args"
    CUT_OFF = "cut_off"


@dataclass(frozen=True)
class ToolCall:
    """One tool call: the function name, its arguments as JSON text, and its id ("" when none)."""

    name: str
    arguments: str
    id: str = ""


@dataclass(frozen=True)
class Message:
    """What a reply says: reasoning, content, tool calls, and the problems found reading it."""

    reasoning_content: str = ""
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    problems: tuple[Problem, ...] = field(default=(), compare=False)

    @property
    def empty(self) -> bool:
        """Nothing read yet (llama.cpp keeps the previous snapshot then)."""
        return not (self.reasoning_content or self.content or self.tool_calls)


class Rejected(protocol.Rejected):
    """llama.cpp would refuse this finished reply (it throws); `reason` says why, `problems` what is off
    (worked out on first access: diagnosing re-reads the reply)."""

    def __init__(self, reason: str, diagnose: Callable[[], tuple[Problem, ...]] = tuple) -> None:
        super().__init__(reason)
        self.reason = reason
        self._diagnose = diagnose
        self._problems: tuple[Problem, ...] | None = None

    @property
    def problems(self) -> tuple[Problem, ...]:
        """What is off about the refused reply."""
        if self._problems is None:
            self._problems = self._diagnose()
        return self._problems


class Unsupported(protocol.Unsupported):
    """No reader for this template (its reply syntax is not implemented)."""


class RenderFailed(Unsupported):
    """A syntax reads the template, but jinja2 cannot render the session (no generation prompt to read from)."""
