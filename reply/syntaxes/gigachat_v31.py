"""GigaChat 3.1 calls read by the autoparser: `<|function_call|>{"name": …, "arguments": {…}}`, no closing marker."""

from __future__ import annotations

from reply import json_calls
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

START = "<|function_call|>"


def detect(template: Template) -> bool:
    """The template writes a call as a JSON object after <|function_call|>."""
    fmt = json_calls.analyze(template)
    return fmt is not None and fmt.section_start == START and not fmt.section_end


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Content up to <|function_call|>, then the calls."""
    fmt = json_calls.analyze(template)
    assert fmt is not None
    return json_calls.build(b, req, template.reasoning, fmt, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [START] if req.use_tools else []


SYNTAX = Syntax("gigachat_v31", AUTOPARSER, detect, build, call_starts, order=62)
