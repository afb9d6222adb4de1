"""Qwen3-Coder XML calls (route qwen3_coder: Qwen3-Coder, Qwen3.5, Nemotron 3 Nano, StepFun 3.5):
`<tool_call>\\n<function=x>\\n<parameter=k>\\nv\\n</parameter>\\n</function>\\n</tool_call>`, values typed by
the parameter's schema (common/parsers/qwen3-coder.cpp)."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.schema import parameters
from reply.syntaxes import Syntax
from reply.template import Template

GEN_PREFIX = "<|im_start|>assistant\n"
ARG_CLOSE = "\n</parameter>\n"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to qwen3_coder."""
    return True


def _thinks(template: Template) -> bool:
    return "<think>" in template.source


def call_starts(template: Template, req: Request) -> list[str]:
    """<tool_call>, and for Qwen3-Coder (no thinking) a bare <function=name> opener."""
    starts = ["<tool_call>"]
    if not _thinks(template):
        starts += [f"<function={t['function']['name']}>" for t in req.tools]
    return starts


def _value(b: ChatBuilder, types: frozenset[str], arg_string: Parser, arg_close: Parser) -> Parser:
    if "string" not in types:
        return b.seq(b.tool_arg_value(b.json()), arg_close)
    if types == frozenset({"string"}):
        return arg_string
    options = []
    if "object" in types:
        options.append(b.rules_json("json-object"))
    if "array" in types:
        options.append(b.rules_json("json-array"))
    if "number" in types or "integer" in types:
        options.append(b.json_number())
    if "boolean" in types:
        options.append(b.rules_json("json-bool"))
    if "null" in types:
        options.append(b.rules_json("json-null"))
    return b.choice(b.atomic(b.seq(b.tool_arg_value(b.choice(*options)), arg_close)), arg_string)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_qwen3_coder's grammar."""
    thinks = _thinks(template)
    prefix = b.lit(GEN_PREFIX)
    think = b.eps()
    if thinks and req.extract_reasoning:
        think = b.optional(b.seq("<think>", b.space(), b.reasoning(b.until("</think>", "<tool_call>")),
                                 b.choice(b.lit("</think>"), b.peek(b.lit("<tool_call>")))))
    if not req.use_tools:
        return b.seq(prefix, think, b.space(), b.content(b.rest()))
    arg_close = b.tool_arg_close(b.lit(ARG_CLOSE))
    arg_string = b.rule("xml-arg-string", b.seq(b.tool_arg_string_value(b.until(ARG_CLOSE)), arg_close))
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        required: list[Parser] = []
        optional: list[Parser] = []
        for param in parameters(tool["function"]):
            opening = b.tool_arg_open(b.seq("<parameter=", b.tool_arg_name(b.lit(param.name)), ">\n"))
            value = _value(b, param.types, arg_string, arg_close)
            rule = b.rule(f"tool-{name}-arg-{param.name}", b.tool_arg(b.seq(opening, value)))
            (required if param.required else optional).append(rule)
        args = b.permute(f"tool-{name}-args", required)
        if optional:
            args = b.seq(args, b.zero_or_more(b.choice(*optional)))
        func = b.tool(b.seq(b.tool_open(b.seq("<function=", b.tool_name(b.lit(name)), ">\n")),
                            b.tool_args(args), b.tool_close(b.lit("</function>\n"))))
        choices.append(b.rule(f"tool-{name}", func))
    body = b.seq(b.choice(*choices), "</tool_call>", b.space())
    call = b.rule("tool-call", b.seq("<tool_call>\n", body))
    first = call if thinks else b.rule("tool-call-first", b.seq(b.optional("<tool_call>\n"), body))
    calls = b.seq(first, b.zero_or_more(call)) if req.parallel else first
    tool_calls = b.rule("tool-call-root", b.repeat(calls, 1 if req.required else 0, 1))
    content = b.content(b.until(*call_starts(template, req)))
    return b.seq(prefix, think, b.space(), content, b.space(), tool_calls)


SYNTAX = Syntax("qwen3_coder", "qwen3_coder", detect, build, call_starts)
