"""Mistral `[TOOL_CALLS]name[ARGS]{json}` calls with `[THINK]…[/THINK]` reasoning (route ministral_3:
Ministral 3, Devstral), after common/parsers/ministral3.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

THINK_START, THINK_END = "[THINK]", "[/THINK]"
CALLS = "[TOOL_CALLS]"
ARGS = "[ARGS]"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to ministral_3."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return [CALLS]


def _spaced(b: ChatBuilder, *parts: Parser) -> Parser:
    """llama.cpp's `a << b << c`: the parts with optional whitespace between them."""
    out = parts[0]
    for part in parts[1:]:
        out = b.seq(out, b.space(), part)
    return out


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_ministral_3's grammar."""
    reasoning = b.eps()
    if req.extract_reasoning:
        reasoning = b.optional(b.seq(THINK_START, b.reasoning(b.until(THINK_END)), THINK_END))
    if not req.use_tools:
        return _spaced(b, reasoning, b.content(b.rest()))
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        choices.append(b.rule(f"tool-{name}", b.seq(b.tool_open(b.seq(b.tool_name(b.lit(name)), ARGS)),
                                                    b.tool_args(b.json()))))
    calls = b.rule("tool-call", b.repeat(b.seq(CALLS, b.choice(*choices)), 1 if req.required else 0,
                                         -1 if req.parallel else 1))
    return _spaced(b, reasoning, b.content(b.until(CALLS)), calls)


SYNTAX = Syntax("ministral_3", "ministral_3", detect, build, call_starts)
