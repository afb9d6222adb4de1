"""Apriel 1.5 / 1.6 calls read by the autoparser: `<tool_calls>[{"name": …, "arguments": {…}}, …]</tool_calls>`."""

from __future__ import annotations

from reply import json_calls
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

SECTION = ("<tool_calls>", "</tool_calls>")


def detect(template: Template) -> bool:
    """The template writes its calls as a JSON list inside <tool_calls> tags."""
    fmt = json_calls.analyze(template)
    return fmt is not None and fmt.array_wrapped and (fmt.section_start, fmt.section_end) == SECTION


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <tool_calls>, then the list of calls."""
    fmt = json_calls.analyze(template)
    assert fmt is not None
    return json_calls.build(b, req, template.reasoning, fmt, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [SECTION[0]] if req.use_tools else []


SYNTAX = Syntax("apriel", AUTOPARSER, detect, build, call_starts, order=60)
