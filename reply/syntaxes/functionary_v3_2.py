"""Functionary v3.2 recipient messages (route functionary_v3_2): `>>>all\n` content and `>>>x\n{json}` calls
after a generation prompt ending in `>>>`, after common/parsers/functionary-v3-2.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

GEN_PROMPT = "<|start_header_id|>assistant<|end_header_id|>\n\n>>>"
CONTENT_RECIPIENT = "all\n"
RECIPIENT = ">>>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to functionary_v3_2."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call after content starts (none when no call may be made)."""
    return [RECIPIENT] if req.use_tools else []


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_functionary_v3_2's grammar."""
    content_until_tool = b.seq(CONTENT_RECIPIENT, b.content(b.until(RECIPIENT)))
    content_only = b.seq(CONTENT_RECIPIENT, b.content(b.rest()))
    if not req.use_tools:
        return b.seq(GEN_PROMPT, content_only, b.end())
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        call = b.tool(b.seq(b.tool_open(b.seq(b.tool_name(b.lit(name)), "\n")), b.tool_args(b.json())))
        choices.append(b.rule(f"tool-{name}", call))
    tool_choice = b.choice(*choices)
    tools_only = b.rule("tools", b.one_or_more(tool_choice))
    if req.required and req.parallel:
        body = b.choice(b.seq(content_until_tool, tools_only), tools_only)
    elif req.required:
        body = b.choice(b.seq(content_until_tool, tool_choice), tools_only)
    elif req.parallel:
        body = b.choice(b.seq(content_until_tool, tools_only), content_only, tools_only)
    else:
        body = b.choice(b.seq(content_until_tool, tool_choice), content_only, tool_choice)
    return b.seq(GEN_PROMPT, body, b.end())


SYNTAX = Syntax("functionary_v3_2", "functionary_v3_2", detect, build, call_starts)
