"""Llama 3.1 / 3.2 / 3.3 calls read by the autoparser: a bare `{"name": …, "parameters": {…}}` object (an
OpenAI `"type": "function"` field accepted first), content up to the first `{`."""

from __future__ import annotations

from reply import json_calls
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template


def detect(template: Template) -> bool:
    """The template writes a call as a bare JSON object with no marker before it."""
    fmt = json_calls.analyze(template)
    return fmt is not None and not fmt.section_start and not fmt.per_call_start and not fmt.array_wrapped


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to the first `{`, then the call."""
    fmt = json_calls.analyze(template)
    assert fmt is not None
    return json_calls.build(b, req, template.reasoning, fmt)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return ["{"]


SYNTAX = Syntax("llama31", AUTOPARSER, detect, build, call_starts, order=140)
