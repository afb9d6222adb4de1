"""GLM calls inside <role>ASSISTANT</role> sections (route ling3: Ling 3.0 / Bailing V3), after
common/parsers/ling3.cpp: tolerant of whitespace between tags, text after the calls up to <|role_end|>."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.schema import parameters
from reply.syntaxes import Syntax
from reply.template import Template

ROLE = "<role>ASSISTANT</role>"
THINK_START, THINK_END = "<think>", "</think>"
CALL_START, CALL_END = "<tool_call>", "</tool_call>"
ARG_KEY, ARG_KEY_END, ARG_VAL, ARG_VAL_END = "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"
ROLE_END = "<|role_end|>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to ling3."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return [CALL_START]


def _think_open(gp: str) -> bool:
    last_open, last_close = gp.rfind(THINK_START), gp.rfind(THINK_END)
    return last_open >= 0 and (last_close < 0 or last_open > last_close)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_ling3's grammar."""
    opener = b.optional(b.seq(ROLE, b.optional(b.space())))
    body_end = b.until(THINK_END, CALL_START) if _think_open(req.generation_prompt) else b.until(THINK_END)
    think_body = b.reasoning(body_end) if req.extract_reasoning else b.content(body_end)
    reasoning = b.optional(b.seq(b.optional(THINK_START), think_body, b.optional(THINK_END)))
    content = b.optional(b.content(b.until(CALL_START)))
    tail = b.seq(b.optional(b.content(b.until(ROLE_END))), b.optional(ROLE_END))
    if not req.use_tools:
        return b.seq(opener, reasoning, tail, b.end())
    arg_close = b.tool_arg_close(b.lit(ARG_VAL_END))
    arg_string = b.rule("ling3-arg-string", b.seq(b.tool_arg_string_value(b.until(ARG_VAL_END)), arg_close))
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        required: list[Parser] = []
        optional: list[Parser] = []
        for param in parameters(tool["function"]):
            types = param.types
            if "string" not in types:
                value = b.seq(b.tool_arg_value(b.json()), arg_close)
            elif types == frozenset({"string"}):
                value = arg_string
            else:
                value = b.choice(b.atomic(b.seq(b.tool_arg_value(b.json()), arg_close)), arg_string)
            arg = b.rule(f"ling3-arg-{name}-{param.name}", b.seq(
                b.optional(b.space()),
                b.tool_arg(b.seq(b.tool_arg_open(b.seq(ARG_KEY, b.tool_arg_name(b.lit(param.name)), ARG_KEY_END)),
                                 b.optional(b.space()), ARG_VAL, value))))
            (required if param.required else optional).append(arg)
        args = b.permute(f"ling3-{name}-args", required)
        if optional:
            args = b.seq(args, b.zero_or_more(b.choice(*optional)))
        call = b.tool(b.seq(b.tool_open(b.seq(CALL_START, b.tool_name(b.lit(name)), b.optional(b.space()))),
                            b.tool_args(args), b.tool_close(b.seq(b.optional(b.space()), CALL_END))))
        choices.append(b.rule(f"ling3-tool-{name}", call))
    choice = b.choice(*choices)
    calls = b.seq(choice, b.zero_or_more(b.seq(b.space(), choice))) if req.parallel else choice
    section = b.rule("ling3-tool-call", b.seq(calls, b.space(), b.optional(b.content(b.until(ROLE_END))),
                                              b.optional(ROLE_END)))
    tools = section if req.required else b.optional(section)
    return b.seq(opener, reasoning, content, tools, tail, b.end())


SYNTAX = Syntax("ling3", "ling3", detect, build, call_starts)
