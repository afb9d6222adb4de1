"""What a request asks of the reader: the tools offered and how, thinking, and the generation prompt."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    """The request-side inputs a grammar depends on."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str = "auto"
    parallel: bool = False
    extract_reasoning: bool = True
    enable_thinking: bool = True
    generation_prompt: str = ""

    @property
    def use_tools(self) -> bool:
        """Tools are offered and may be called."""
        return bool(self.tools) and self.tool_choice != "none"

    @property
    def required(self) -> bool:
        """A call is required."""
        return self.tool_choice == "required"
