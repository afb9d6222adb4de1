"""Apriel 1.5 / 1.6 calls read by the autoparser: `<tool_calls>[{"name": …, "arguments": {…}}, …]</tool_calls>`."""

from __future__ import annotations

from reply import json_calls
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

SECTION = ("<tool_calls>", "</tool_calls>")


def detect(template: Template) -> bool:
    """The template writes its calls as a JSON list inside <tool_calls> tags."""
    fmt = json_calls.analyze(template)
    return fmt is not None and fmt.array_wrapped and (fmt.section_start, fmt.section_end) == SECTION


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [SECTION[0]] if req.use_tools else []


SYNTAX = Syntax("apriel", AUTOPARSER, detect, json_calls.build_for_template, call_starts, order=60)
