"""Cohere2 MoE ("North Code") turns (route cohere2moe): `<|START_THINKING|>…<|END_THINKING|>` reasoning, then
either `<|START_TEXT|>…<|END_TEXT|>` content or `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "x",
"parameters": {…}}, …]<|END_ACTION|>` calls, after common/parsers/cohere2moe.cpp."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

GEN_PREFIX = "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
TURN_END = "<|END_OF_TURN_TOKEN|>"
THINK_START, THINK_END = "<|START_THINKING|>", "<|END_THINKING|>"
TEXT_START, TEXT_END = "<|START_TEXT|>", "<|END_TEXT|>"
ACTION_START, ACTION_END = "<|START_ACTION|>", "<|END_ACTION|>"
ID_KEY, NAME_KEY, ARGS_KEY = "tool_call_id", "tool_name", "parameters"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to cohere2moe."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start (none when no call may be made)."""
    return [ACTION_START] if req.use_tools else []


def _key(b: ChatBuilder, key: str) -> Parser:
    return b.seq(f'"{key}"', b.space(), ":", b.space())


def _tool_calls(b: ChatBuilder, req: Request) -> Parser:
    """standard_json_tools with the call array wrapped in `[…]`, a generated `tool_call_id` first, then
    `tool_name` and `parameters` (flat keys in parameters_order)."""
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        call_id = b.atomic(b.seq(_key(b, ID_KEY), b.choice(b.seq('"', b.tool_id(b.string_content('"')), '"'),
                                                           b.tool_id(b.json_number()))))
        name_part = b.seq(_key(b, NAME_KEY), b.atomic(b.seq('"', b.tool_name(b.lit(name)), '"')))
        args_part = b.seq(_key(b, ARGS_KEY), b.tool_args(b.json()))
        comma = b.seq(b.space(), ",", b.space())
        body = b.seq(b.tool_open(b.lit("{")), b.space(), b.optional(call_id), comma, name_part, comma, args_part,
                     b.space(), b.tool_close(b.lit("}")))
        choices.append(b.rule(f"tool-{name}", b.tool(body)))
    calls = b.choice(*choices)
    if req.parallel:
        calls = b.seq(calls, b.zero_or_more(b.seq(b.space(), ",", b.space(), calls)))
    calls = b.seq("[", b.space(), calls, b.space(), "]")
    return b.rule("tool-call", b.seq(ACTION_START, b.space(), calls, b.space(), ACTION_END))


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_cohere2moe's grammar."""
    body_of_thought = b.until(THINK_END, TEXT_START, ACTION_START)
    if req.extract_reasoning:
        thought = b.seq(THINK_START, b.reasoning(body_of_thought), b.optional(THINK_END))
    else:
        thought = b.content(b.seq(THINK_START, body_of_thought, b.optional(THINK_END)))
    reasoning = b.optional(thought)
    text = b.seq(TEXT_START, b.content(b.until(TEXT_END)), b.optional(TEXT_END))
    ending = b.seq(b.optional(TURN_END), b.end())
    if not req.use_tools:
        return b.seq(GEN_PREFIX, reasoning, text, ending)
    calls = _tool_calls(b, req)
    answer = calls if req.required else b.choice(calls, text)
    return b.seq(GEN_PREFIX, reasoning, answer, ending)


SYNTAX = Syntax("cohere2moe", "cohere2moe", detect, build, call_starts)
