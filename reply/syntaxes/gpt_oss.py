"""OpenAI Harmony (route gpt_oss: gpt-oss): `<|channel|>analysis<|message|>…<|end|>` reasoning, a
`<|channel|>final<|message|>` answer, and calls addressed ` to=functions.x` with `<|message|>{json}`,
after common/parsers/gpt-oss.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

START = "<|start|>assistant"
END = "<|end|>"
MESSAGE = "<|message|>"
CHANNEL = "<|channel|>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to gpt_oss."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts: a recipient in the role header of a later message or in a channel header."""
    return [f"{START} to=functions.", f"{CHANNEL}commentary to=functions.", f"{CHANNEL}analysis to=functions."]


def _constraint_type(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "_-")


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_gpt_oss's grammar."""
    start = b.rule("start", b.lit(START))
    end = b.rule("end", b.lit(END))
    content = b.rule("message-content", b.until(END))
    channel = b.seq(CHANNEL, b.choice("commentary", "analysis"))
    stray_commentary = b.optional(b.seq(f"{CHANNEL}commentary", b.optional(" to=assistant")))
    start_analysis = b.seq(stray_commentary, f"{CHANNEL}analysis{MESSAGE}")
    if req.extract_reasoning:
        analysis = b.rule("analysis", b.seq(start_analysis, b.reasoning(content), end))
    else:
        analysis = b.rule("analysis", b.content(b.seq(start_analysis, content, end)))
    preamble = b.rule("preamble", b.seq(f"{CHANNEL}commentary{MESSAGE}", b.content(content), end))
    final_msg = b.rule("final", b.seq(stray_commentary, f"{CHANNEL}final{MESSAGE}", b.content(content)))
    unsolicited = b.rule("unsolicited", b.atomic(b.seq(b.optional(channel), " to=", content, end)))
    any_msg = b.rule("any", b.choice(preamble, analysis))
    earlier = b.zero_or_more(b.seq(start, any_msg))
    if not req.use_tools:
        return b.seq(earlier, start, b.choice(final_msg, unsolicited))
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        func_name = b.seq(" to=functions.", b.tool_name(b.lit(name)))
        constraint = b.optional(b.seq(b.space(), b.optional("<|constrain|>"), b.chars(_constraint_type, 1, -1)))
        args = b.tool_args(b.json())
        in_role = b.tool(b.seq(b.tool_open(b.seq(func_name, channel, constraint, MESSAGE)), args))
        in_channel = b.tool(b.seq(b.tool_open(b.seq(channel, func_name, constraint, MESSAGE)), args))
        choices.append(b.rule(f"tool-{name}", b.choice(in_role, in_channel)))
    tool_call = b.rule("tool-call", b.choice(*choices))
    if req.required:
        return b.seq(earlier, start, tool_call)
    return b.seq(earlier, start, b.choice(tool_call, final_msg))


SYNTAX = Syntax("gpt_oss", "gpt_oss", detect, build, call_starts)
