"""Command R7B calls read by the autoparser:
`<|START_ACTION|>[{"tool_call_id": …, "tool_name": …, "parameters": {…}}]<|END_ACTION|>`, with the reasoning the
template writes beside calls in <|START_THINKING|>…<|END_THINKING|>."""

from __future__ import annotations

from reply import json_calls
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

SECTION = ("<|START_ACTION|>", "<|END_ACTION|>")


def detect(template: Template) -> bool:
    """The template writes its calls as a JSON list between <|START_ACTION|> and <|END_ACTION|>."""
    fmt = json_calls.analyze(template)
    return fmt is not None and fmt.array_wrapped and (fmt.section_start, fmt.section_end) == SECTION


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [SECTION[0]] if req.use_tools else []


SYNTAX = Syntax("command_r", AUTOPARSER, detect, json_calls.build_for_template, call_starts, order=61)
