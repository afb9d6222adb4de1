"""Mistral Nemo calls read by the autoparser: `[TOOL_CALLS][{"name": …, "arguments": {…}, "id": …}, …]`, a
JSON list after a marker."""

from __future__ import annotations

from reply import json_calls
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template


def detect(template: Template) -> bool:
    """The template writes its calls as a JSON list after a marker, with no closing marker."""
    fmt = json_calls.analyze(template)
    return (fmt is not None and fmt.array_wrapped and bool(fmt.section_start or fmt.per_call_start)
            and not fmt.section_end and not fmt.per_call_end)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to the marker, then the list of calls."""
    fmt = json_calls.analyze(template)
    assert fmt is not None
    return json_calls.build(b, req, template.reasoning, fmt)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    fmt = json_calls.analyze(template)
    return [fmt.tool_start] if fmt else []


SYNTAX = Syntax("mistral_list", AUTOPARSER, detect, build, call_starts, order=150)
