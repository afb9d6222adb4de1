"""GigaChat 3.1 calls read by the autoparser: `<|function_call|>{"name": …, "arguments": {…}}`, no closing marker."""

from __future__ import annotations

from reply import json_calls
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

START = "<|function_call|>"


def detect(template: Template) -> bool:
    """The template writes a call as a JSON object after <|function_call|>."""
    fmt = json_calls.analyze(template)
    return fmt is not None and fmt.section_start == START and not fmt.section_end


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [START] if req.use_tools else []


SYNTAX = Syntax("gigachat_v31", AUTOPARSER, detect, json_calls.build_for_template, call_starts, order=62)
