"""Command R+ calls read by the autoparser: content always wrapped as <|CHATBOT_TOKEN|>…<|END_OF_TURN_TOKEN|>
(llama.cpp's Command R+ patch), calls as `Action:\\n```json\\n[{"tool_name": …, "parameters": {…}}]````."""

from __future__ import annotations

from reply import json_calls
from reply.analysis import COHERE_WRAP
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template


def detect(template: Template) -> bool:
    """The template writes `Action:` then a JSON list, and wraps its answers in Cohere's chatbot tokens."""
    fmt = json_calls.analyze(template)
    return (fmt is not None and fmt.section_start.startswith("Action:")
            and all(tag in template.source for tag in COHERE_WRAP))


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    fmt = json_calls.analyze(template)
    return [fmt.section_start] if fmt and req.use_tools else []


SYNTAX = Syntax("command_r_plus", AUTOPARSER, detect, json_calls.build_for_template, call_starts, order=64)
