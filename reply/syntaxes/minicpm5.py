"""MiniCPM5 calls (route minicpm5): `<think>…</think>` reasoning, then content and
`<function name="x"><param name="k">v</param></function>` calls, string values raw or in `<![CDATA[…]]>`,
other values JSON, after common/parsers/minicpm5.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

GEN_PROMPT = "<|im_start|>assistant\n"
THINK_START, THINK_END = "<think>", "</think>"
CALL_START = "<function"
PARAM_END = "</param>"
CDATA_START, CDATA_END = "<![CDATA[", "]]>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to minicpm5."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts (none when no call may be made)."""
    return [CALL_START] if req.use_tools else []


def _string_value(b: ChatBuilder) -> Parser:
    """A raw string value, or one wrapped in CDATA (only the inner text is the value)."""
    close = b.tool_arg_close(b.lit(PARAM_END))
    in_cdata = b.seq(CDATA_START, b.tool_arg_string_value(b.until(CDATA_END)), CDATA_END, close)
    raw = b.seq(b.negate(b.lit(CDATA_START)), b.tool_arg_string_value(b.until(PARAM_END)), close)
    return b.choice(in_cdata, raw)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_minicpm5's grammar."""
    reasoning = b.eps()
    if req.extract_reasoning:
        reasoning = b.seq(THINK_START, b.space(), b.reasoning(b.until(THINK_END)), b.space(), THINK_END, b.space())
    if not req.use_tools:
        return b.seq(GEN_PROMPT, reasoning, b.content(b.rest()), b.end())
    string_value = _string_value(b)
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        args = b.tagged_arguments(tool["function"], '<param name="', string_value, PARAM_END)
        opening = b.tool_open(b.seq('<function name="', b.tool_name(b.lit(name)), '">'))
        call = b.tool(b.seq(opening, b.space(), b.tool_args(args), b.space(), b.tool_close(b.lit("</function>"))))
        choices.append(b.rule(f"tool-{name}", call))
    tool_calls = b.rule("tool-call", b.repeat(b.seq(b.choice(*choices), b.space()), 1, -1 if req.parallel else 1))
    return b.seq(GEN_PROMPT, reasoning, b.content(b.until(CALL_START)), tool_calls, b.end())


SYNTAX = Syntax("minicpm5", "minicpm5", detect, build, call_starts)
