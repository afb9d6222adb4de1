"""MiniMax-M1 calls read by the autoparser: `<tool_calls>\\n{"name": …, "arguments": {…}}\\n</tool_calls>`, JSON
objects (comma-separated when parallel) without a list around them."""

from __future__ import annotations

from reply import json_calls
from reply.analysis import trim_whitespace
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template


def detect(template: Template) -> bool:
    """The template writes bare JSON call objects inside <tool_calls> tags."""
    fmt = json_calls.analyze(template)
    return (fmt is not None and not fmt.array_wrapped and trim_whitespace(fmt.section_start) == "<tool_calls>"
            and fmt.section_end == "</tool_calls>")


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    fmt = json_calls.analyze(template)
    return [fmt.tool_start] if fmt and req.use_tools else []


SYNTAX = Syntax("minimax_m1", AUTOPARSER, detect, json_calls.build_for_template, call_starts, order=63)
