"""Mistral Small 3.2 calls read by the autoparser: `[TOOL_CALLS]name[CALL_ID]id[ARGS]{json}` as the template
writes them. llama.cpp's analysis takes the marker after the name's id as the name's suffix too, so the
grammar it builds reads `[TOOL_CALLS]name[ARGS]` then an optional `[CALL_ID]id` and `[ARGS]{json}`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from reply import autoparser
from reply.analysis import diff_split, trim_whitespace
from reply.chat import ChatBuilder
from reply.json_calls import (
    ARG_FIRST,
    CALL_ID,
    FUN_FIRST,
    FUN_SECOND,
    USER,
    apply,
    call_haystack,
    calls_turn,
    probe_call,
    quoted_in_json,
)
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

MARKER = r"(?:<[^>]*>|\[[^\]]*\])"
CALL = re.compile("(" + MARKER + r"[ \t\n\v\f\r]*)" + FUN_FIRST + "(" + MARKER + ")" + CALL_ID[:4] + r"\w*?"
                  + "(" + MARKER + r")\{")


@dataclass(frozen=True)
class IdCalls:
    """The markers llama.cpp's analysis finds: where calls start, the name's suffix, the id's markers."""

    section_start: str
    per_call_start: str
    name_suffix: str
    id_prefix: str

    @property
    def start(self) -> str:
        """Where content stops."""
        return self.section_start or self.per_call_start


@lru_cache(maxsize=64)
def _analyze(source: str, bos: str, eos: str) -> IdCalls | None:
    template = Template(source, bos, eos)
    haystack = call_haystack(template)
    if not haystack or quoted_in_json(haystack, FUN_FIRST) or not quoted_in_json(haystack, ARG_FIRST):
        return None
    found = CALL.match(haystack.lstrip(" \t\n\v\f\r"))
    if found is None:
        return None
    start, id_prefix, name_suffix = found.groups()
    one = apply(template, [USER, calls_turn(probe_call(FUN_FIRST, CALL_ID))])
    two = apply(template, [USER, calls_turn(probe_call(FUN_FIRST, CALL_ID), probe_call(FUN_SECOND, "call00002"))])
    if one is not None and two is not None and FUN_SECOND in two:
        outer = diff_split(one, two)
        second = diff_split(outer.suffix, outer.right).right.lstrip(" \t\n\v\f\r")
        if second.startswith(start):
            return IdCalls("", start, name_suffix, id_prefix)
    return IdCalls(start, "", name_suffix, id_prefix)


def analyze(template: Template) -> IdCalls | None:
    """The template's call markers, or None when it writes no `marker name marker id marker {json}` call."""
    return _analyze(template.source, template.bos, template.eos)


def detect(template: Template) -> bool:
    """The template writes `[TOOL_CALLS]name[CALL_ID]id[ARGS]{json}` (any markers in those places)."""
    return analyze(template) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """build_tool_parser_tag_json with a call id between the name and the arguments."""
    fmt = analyze(template)
    assert fmt is not None
    reasoning = template.reasoning
    if not req.use_tools:
        return autoparser.build(b, req, reasoning, None)
    think = autoparser.reasoning_parser(b, reasoning, req.extract_reasoning and reasoning.found)
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        call_id = b.seq(b.optional(b.seq(fmt.id_prefix, b.tool_id(b.until(fmt.name_suffix)))), fmt.name_suffix)
        opening = b.tool_open(b.seq(b.tool_name(b.lit(name)), fmt.name_suffix))
        func = b.seq(opening, call_id, b.space(), b.tool_args(b.json()), b.tool_close(b.space()))
        choices.append(b.rule(f"tool-{name}", func))
    choice = b.choice(*choices)
    if fmt.per_call_start:
        wrapped = b.seq(fmt.per_call_start, choice)
        calls = b.seq(wrapped, b.zero_or_more(b.seq(b.space(), wrapped))) if req.parallel else wrapped
        calls = b.rule("tool-call", calls)
    else:
        many = b.zero_or_more(b.seq(", ", choice)) if req.parallel else b.eps()
        calls = b.rule("tool-call", b.seq(fmt.section_start, choice, many))
    if not req.required:
        calls = b.optional(calls)
    body = b.seq(think, b.optional(b.content(b.until(fmt.start))), calls, b.end())
    return b.seq(b.prefix(req.generation_prompt, trim_whitespace(reasoning.start)), b.space(), body)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    fmt = analyze(template)
    return [fmt.start] if fmt else []


SYNTAX = Syntax("mistral_call_id", AUTOPARSER, detect, build, call_starts, order=160)
