"""DeepSeek V3.2 / V4 DSML calls (route deepseek_v3_2), after common/parsers/deepseek.cpp:
`<｜DSML｜function_calls>` (V4: `tool_calls`) holding `<｜DSML｜invoke name="x">` and
`<｜DSML｜parameter name="k" string="true|false">v</｜DSML｜parameter>`."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.schema import parameters
from reply.syntaxes import Syntax
from reply.template import Template

DSML = "｜DSML｜"
THINK_START, THINK_END = "<think>", "</think>"
GEN_PROMPT = "<｜Assistant｜>"
SEPARATOR = "\n\n"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to deepseek_v3_2."""
    return True


def _block(template: Template) -> str:
    return "function_calls" if "function_calls" in template.source else "tool_calls"


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [f"<{DSML}{_block(template)}>"]


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_deepseek_v3_2's grammar."""
    is_v4 = _block(template) == "tool_calls"
    fc_start, fc_end = f"<{DSML}{_block(template)}>", f"</{DSML}{_block(template)}>"
    invoke_start, invoke_end = f"<{DSML}invoke", f"</{DSML}invoke>"
    param_start, param_end = f"<{DSML}parameter", f"</{DSML}parameter>"
    prefix = b.lit(GEN_PROMPT)
    choices = []
    for tool in req.tools if req.use_tools else []:
        name = tool["function"]["name"]
        required: list[Parser] = []
        optional: list[Parser] = []
        for param in parameters(tool["function"]):
            is_string = param.may_be_string
            opening = b.tool_arg_open(b.seq(f'{param_start} name="', b.tool_arg_name(b.lit(param.name)),
                                            f'" string="{"true" if is_string else "false"}">'))
            value = b.tool_arg_string_value(b.until(param_end)) if is_string else b.tool_arg_value(b.json())
            arg = b.rule(f"tool-{name}-arg-{param.name}",
                         b.tool_arg(b.seq(opening, value, b.tool_arg_close(b.lit(param_end)))))
            (required if param.required else optional).append(arg)
        parts: list[Parser] = []
        for i, arg in enumerate(required):
            if i:
                parts.append(b.space())
            parts.append(arg)
        if optional:
            parts.append(b.repeat(b.seq(b.space(), b.choice(*optional)), 0, -1))
        body = b.seq(*parts) if parts else b.eps()
        func = b.tool(b.seq(b.tool_open(b.seq(f'{invoke_start} name="', b.tool_name(b.lit(name)), '">\n')),
                            body, b.space(), b.tool_close(b.lit(invoke_end))))
        choices.append(b.rule(f"tool-{name}", func))
    choice = b.choice(*choices)
    if req.parallel:
        calls = b.seq(fc_start, b.space(), choice, b.zero_or_more(b.seq(b.space(), choice)), b.space(), fc_end)
    else:
        calls = b.seq(fc_start, b.space(), choice, b.space(), fc_end)
    obligatory = b.rule("tool-call", calls)
    tool_calls = obligatory if req.required else b.optional(obligatory)
    reasoning = b.eps()
    with_calls = None
    if req.extract_reasoning and req.enable_thinking:
        reasoning = b.optional(b.seq(THINK_START, b.reasoning(b.until(THINK_END)), THINK_END))
        with_calls = b.seq(THINK_START, b.reasoning(b.until(SEPARATOR + fc_start, fc_start, THINK_END)),
                           b.space(), obligatory)
    elif req.extract_reasoning:
        reasoning = (b.optional(THINK_END) if is_v4
                     else b.optional(b.seq(THINK_START, b.until(THINK_END), THINK_END)))
    if not req.use_tools:
        return b.seq(prefix, reasoning, b.content(b.rest()), b.end())
    before = b.seq(b.negate(b.lit(THINK_START)), b.content(b.until(SEPARATOR + fc_start, fc_start)), b.space())
    plain = b.seq(reasoning, before, tool_calls)
    if with_calls is not None:
        return b.seq(prefix, b.choice(with_calls, plain), b.end())
    return b.seq(prefix, plain, b.end())


SYNTAX = Syntax("deepseek_v3_2", "deepseek_v3_2", detect, build, call_starts)
