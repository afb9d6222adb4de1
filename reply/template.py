"""A template as the readers see it: its source and special tokens, the route llama.cpp takes for it, and
what probe renderings with jinja2 show (reasoning markers, whether it writes tool calls, a call turn)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from reply.analysis import Content, Reasoning, analyze_content, analyze_reasoning
from reply.rendering import render
from reply.routes import route

PROBE_FUNCTION = "FFF_FIRST_FUN_F"
PROBE_ARG = "AA_ARG_FST_AA"
PROBE_ARG_TWO = "BB_ARG_SND_BB"
PROBE_TOOLS = [{
    "type": "function",
    "function": {
        "name": PROBE_FUNCTION,
        "description": "Test function",
        "parameters": {"type": "object", "properties": {PROBE_ARG: {"type": "string"}, PROBE_ARG_TWO: {"type": "string"}},
                       "required": [PROBE_ARG]},
    },
}]
PROBE_USER = {"role": "user", "content": "U_USER_MSG Hello END_U"}


def probe_call(args: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn holding one call of the probe function."""
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call00001", "type": "function", "function": {"name": PROBE_FUNCTION, "arguments": args}}]}


@dataclass(frozen=True)
class Template:
    """One chat template and its special tokens."""

    source: str = field(repr=False)
    bos: str = ""
    eos: str = ""

    @cached_property
    def route(self) -> str:
        """llama.cpp's route for it."""
        return route(self.source)

    @cached_property
    def reasoning(self) -> Reasoning:
        """The reasoning markers the differential analysis finds."""
        return analyze_reasoning(self.source, self.bos, self.eos)

    @cached_property
    def content(self) -> Content:
        """The content markers the differential analysis finds."""
        return analyze_content(self.source, self.bos, self.eos)

    def render_turns(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                     thinking: bool = True) -> str | None:
        """A probe render (None when the template raises)."""
        try:
            return render(self.source, bos=self.bos, eos=self.eos, messages=messages, tools=tools or [],
                          add_generation_prompt=False, enable_thinking=thinking,
                          extra={"enable_thinking": thinking})
        except Exception:  # noqa: BLE001 - a template may raise anything; the probe then fails (None)
            return None

    @cached_property
    def call_probe(self) -> str | None:
        """What the template writes for an assistant turn holding one call with two string arguments: the
        render with the turn past the render without it; '' when it writes no call, None when jinja2 fails."""
        base = self.render_turns([PROBE_USER], PROBE_TOOLS)
        full = self.render_turns([PROBE_USER, probe_call({PROBE_ARG: "XXXX", PROBE_ARG_TWO: "YYYY"})], PROBE_TOOLS)
        if base is None or full is None:
            return None
        if PROBE_FUNCTION not in full:
            return ""
        size = 0
        while size < min(len(base), len(full)) and base[size] == full[size]:
            size += 1
        return full[size:]

    @property
    def call_turn(self) -> str:
        """The probe call turn ('' when none could be rendered)."""
        return self.call_probe or ""

    @property
    def writes_no_tool_calls(self) -> bool:
        """The template renders fine but never writes an assistant's tool calls (no supports_tool_calls)."""
        return self.call_probe == ""


@lru_cache(maxsize=16)
def template_of(source: str, bos: str = "", eos: str = "") -> Template:
    """The one Template of a source and its special tokens, so its probes run once for all its sessions."""
    return Template(source, bos, eos)
