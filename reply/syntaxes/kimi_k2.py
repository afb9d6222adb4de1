"""Kimi K2 calls (route kimi_k2), after common/parsers/kimi-k2.cpp: an optional
`<|tool_calls_section_begin|>`, then `<|tool_call_begin|>functions.x:0<|tool_call_argument_begin|>{json}
<|tool_call_end|>` per call (the id is `functions.x:N`), an optional `<|tool_calls_section_end|>`;
reasoning in `<think>…</think>` may run straight into the calls."""

from __future__ import annotations

from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

SECTION_BEGIN, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CALL_BEGIN, ARGS_BEGIN, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
THINK_START, THINK_END = "<think>", "</think>"
GEN_PROMPT = "<|im_assistant|>assistant<|im_middle|>"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to kimi_k2."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start (nowhere when no tools are offered)."""
    return [SECTION_BEGIN, CALL_BEGIN] if req.use_tools else []


def held_markers(template: Template, req: Request) -> list[str]:
    """The call starts where reasoning may stop before one and the rest is content (no tools); none else."""
    return [SECTION_BEGIN, CALL_BEGIN] if req.extract_reasoning and not req.use_tools else []


def _ascii_digit(c: str) -> bool:
    return "0" <= c <= "9"


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_kimi_k2's grammar."""
    reasoning = b.eps()
    if req.extract_reasoning:
        reasoning = b.optional(b.seq(THINK_START, b.reasoning(b.until(THINK_END, SECTION_BEGIN, CALL_BEGIN)),
                                     b.optional(THINK_END)))
    prefix = b.lit(GEN_PROMPT)
    if not req.use_tools:
        return b.seq(prefix, reasoning, b.content(b.rest()), b.end())
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        call_id = b.tool_id(b.seq("functions.", b.tool_name(b.lit(name)), ":", b.chars(_ascii_digit, 1, -1)))
        call = b.tool(b.seq(b.tool_open(b.seq(call_id, ARGS_BEGIN)), b.tool_args(b.json()),
                            b.tool_close(b.optional(CALL_END))))
        choices.append(b.rule(f"tool-{name}", call))
    low, high = (1 if req.required else 0), (-1 if req.parallel else 1)
    calls = b.repeat(b.seq(CALL_BEGIN, b.choice(*choices)), low, high)
    tool_calls = b.rule("tool-calls", b.seq(b.optional(SECTION_BEGIN),
                                            b.rule("tool-call", b.seq(calls, b.optional(SECTION_END)))))
    before = b.content(b.until(SECTION_BEGIN, CALL_BEGIN))
    return b.seq(prefix, reasoning, before, tool_calls, b.end())


SYNTAX = Syntax("kimi_k2", "kimi_k2", detect, build, call_starts, held_markers=held_markers)
