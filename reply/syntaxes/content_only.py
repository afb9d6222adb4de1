"""Templates llama.cpp's autoparser finds no tool calls in: reasoning (when the template has it) and content."""

from __future__ import annotations

from reply import autoparser
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

CONTENT_WRAPPERS = ("Write your thoughts between <think></think> and write your response between",
                    "<|CHATBOT_TOKEN|>")


def detect(template: Template) -> bool:
    """No tool calls written (the probe renders), and no content wrapper the analysis would add."""
    return template.writes_no_tool_calls and not any(w in template.source for w in CONTENT_WRAPPERS)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning then content."""
    return autoparser.build(b, req, template.reasoning, None)


SYNTAX = Syntax("content_only", AUTOPARSER, detect, build, order=900)
