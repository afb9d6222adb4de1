"""GigaChat 3 function-call messages (route gigachat_v3): content, then a separate
`<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "x", "arguments": {…}}` message, at most one call,
after common/parsers/gigachat-v3.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

GEN_PROMPT = "assistant<|role_sep|>\n"
MESSAGE_SEP = "<|message_sep|>\n\n"
CALL_START = MESSAGE_SEP + "function call<|role_sep|>\n"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to gigachat_v3."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the call starts (none when no call may be made)."""
    return [CALL_START] if req.use_tools else []


def _member(b: ChatBuilder, key: str, value: Parser) -> Parser:
    """common_peg_parser_builder::json_member."""
    return b.seq(f'"{key}"', b.space(), ":", b.space(), value)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_gigachat_v3's grammar (it has no end: text past the call is dropped)."""
    if not req.use_tools:
        return b.seq(GEN_PROMPT, b.content(b.rest()))
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        name_member = _member(b, "name", b.seq('"', b.tool_name(b.lit(name)), '"'))
        args_member = _member(b, "arguments", b.tool_args(b.json()))
        opening = b.tool_open(b.seq("{", b.space(), name_member))
        choices.append(b.rule(f"tool-{name}", b.seq(opening, b.space(), ",", b.space(), args_member,
                                                    b.space(), "}")))
    tool_call = b.rule("tool-call", b.seq(CALL_START, b.choice(*choices)))
    tool_calls = b.rule("tool-call-root", b.repeat(tool_call, 1 if req.required else 0, 1))
    return b.seq(GEN_PROMPT, b.content(b.until(MESSAGE_SEP)), b.space(), tool_calls)


SYNTAX = Syntax("gigachat_v3", "gigachat_v3", detect, build, call_starts)
