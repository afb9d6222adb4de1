"""Muse Glimmer recipient messages (route muse_glimmer): ` to=self<|message|>…<|eom|>` reasoning, a
` to=user<|message|>` answer, and calls ` to=x<|message|><atem:function_calls>` holding
`<atem:invoke name="x">` and `<atem:parameter name="k">v</atem:parameter>`, values typed by the schema,
after common/parsers/muse-glimmer.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

START = "<|start|>assistant"
MESSAGE = "<|message|>"
EOM, EOT = "<|eom|>", "<|eot|>"
PARAM_END = "</atem:parameter>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to muse_glimmer."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return ["<atem:function_calls>"]


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_muse_glimmer's grammar."""
    start = b.rule("start", b.lit(START))
    if not req.extract_reasoning and not req.use_tools:
        return b.seq(start, b.content(b.rest()))
    body = b.until(EOM)
    analysis = b.rule("analysis", b.seq(f" to=self{MESSAGE}", b.reasoning(body) if req.extract_reasoning
                                        else b.content(body), EOM))
    recipient = b.optional(" to=user")
    final_msg = b.rule("final", b.seq(recipient, MESSAGE, b.content(b.until(EOT, EOM))))
    earlier = b.zero_or_more(b.seq(start, analysis))
    if not req.use_tools:
        return b.seq(earlier, start, final_msg)
    string_value = b.seq(b.tool_arg_string_value(b.until(PARAM_END)), b.tool_arg_close(b.lit(PARAM_END)))
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        args = b.tagged_arguments(tool["function"], '<atem:parameter name="', string_value, PARAM_END)
        opening = b.tool_open(b.seq(" to=", b.until(MESSAGE), f"{MESSAGE}<atem:function_calls>", b.space(),
                                    '<atem:invoke name="', b.tool_name(b.lit(name)), '">', b.space()))
        closing = b.tool_close(b.seq("</atem:invoke>", b.space(), "</atem:function_calls>"))
        call = b.tool(b.seq(opening, b.space(), b.tool_args(args), b.space(), closing))
        choices.append(b.rule(f"tool-{name}", call))
    choice = b.choice(*choices)
    if req.parallel:
        tool_calls = b.rule("tool-call", b.seq(choice, b.zero_or_more(b.seq(EOM, start, choice))))
    else:
        tool_calls = b.rule("tool-call", choice)
    if req.required:
        return b.seq(earlier, start, tool_calls)
    trailing = b.optional(b.seq(EOM, start, tool_calls))
    return b.seq(earlier, start, b.choice(tool_calls, b.seq(final_msg, trailing)))


SYNTAX = Syntax("muse_glimmer", "muse_glimmer", detect, build, call_starts)
