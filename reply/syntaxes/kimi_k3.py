"""Kimi K3 XTML sections (route kimi_k3), after common/parsers/kimi-k3.cpp: `<|open|>think<|sep|>` reasoning,
`<|open|>response<|sep|>` content, then `<|open|>tools<|sep|>` holding `<|open|>call tool="x" …<|sep|>` and
`<|open|>argument key="k" …<|sep|>v<|close|>argument<|sep|>` (values typed by the schema), closed by
`<|close|>message<|sep|><|end_of_msg|>`; every opener may be missing."""

from __future__ import annotations

from typing import Any

from reply.chat import ChatBuilder, tool_parameters
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

SEP = "<|sep|>"
MSG_START = '<|open|>message role="assistant"<|sep|>'
THINK_START, THINK_END = "<|open|>think<|sep|>", "<|close|>think<|sep|>"
RESP_START, RESP_END = "<|open|>response<|sep|>", "<|close|>response<|sep|>"
TOOLS_START, TOOLS_END = "<|open|>tools<|sep|>", "<|close|>tools<|sep|>"
CALL_START, CALL_END = '<|open|>call tool="', "<|close|>call<|sep|>"
ARG_START, ARG_END = '<|open|>argument key="', "<|close|>argument<|sep|>"
MSG_END, EOM = "<|close|>message<|sep|>", "<|end_of_msg|>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to kimi_k3."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start (nowhere when no tools are offered)."""
    return [TOOLS_START] if req.use_tools else []


def held_markers(template: Template, req: Request) -> list[str]:
    """None: the grammar's own scans stop before every marker's start, so llama.cpp takes nothing back."""
    return []


def _schema_type(prop: Any) -> str:
    """A property's declared type when it is one string, else "string" (as llama.cpp reads it)."""
    if isinstance(prop, dict) and isinstance(prop.get("type"), str):
        return prop["type"]
    return "string"


def _call(b: ChatBuilder, function: dict[str, Any]) -> Parser:
    name = function["name"]
    properties = tool_parameters(function).get("properties") or {}
    args = b.eps()
    if properties:
        arg_choices = []
        for key in sorted(properties):
            value = (b.tool_arg_string_value(b.until(ARG_END)) if _schema_type(properties[key]) == "string"
                     else b.tool_arg_value(b.until(ARG_END)))
            arg = b.tool_arg(b.seq(b.tool_arg_open(b.lit(ARG_START)), b.tool_arg_name(b.lit(key)), '"',
                                   b.until(SEP), SEP, value, b.tool_arg_close(b.lit(ARG_END))))
            arg_choices.append(b.rule(f"kimi-k3-arg-{name}-{key}", arg))
        args = b.zero_or_more(b.choice(*arg_choices))
    opening = b.tool_open(b.seq(CALL_START, b.tool_name(b.lit(name)), '"', b.until(SEP), SEP))
    call = b.tool(b.seq(opening, b.tool_args(args), b.tool_close(b.lit(CALL_END))))
    return b.rule(f"kimi-k3-tool-{name}", call)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_kimi_k3's grammar."""
    start = b.optional(MSG_START)
    think_text = b.until(THINK_END, RESP_START)
    think_body = b.reasoning(think_text) if req.extract_reasoning else b.content(think_text)
    reasoning = b.optional(b.seq(b.optional(THINK_START), think_body, b.optional(THINK_END)))
    response = b.seq(b.optional(RESP_START), b.content(b.until(RESP_END, TOOLS_START, MSG_END)),
                     b.optional(RESP_END))
    trailer = b.seq(b.optional(MSG_END), b.optional(EOM))
    if not req.use_tools:
        return b.seq(start, reasoning, response, trailer, b.end())
    calls = b.choice(*(_call(b, tool["function"]) for tool in req.tools))
    section = b.rule("kimi-k3-tool-call", b.seq(TOOLS_START, b.one_or_more(calls), TOOLS_END,
                                                 b.optional(MSG_END), b.optional(EOM)))
    tools = section if req.required else b.optional(section)
    return b.seq(start, reasoning, response, tools, trailer, b.end())


SYNTAX = Syntax("kimi_k3", "kimi_k3", detect, build, call_starts, held_markers=held_markers)
