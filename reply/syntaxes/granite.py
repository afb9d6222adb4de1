"""Granite 3.3, as llama.cpp's Granite 3.3 patch reads it: reasoning in <think>…</think>, everything else
content (the template never writes an assistant's tool calls, so `<|tool_call|>[…]` stays content)."""

from __future__ import annotations

from reply import autoparser
from reply.analysis import GRANITE_THINKING
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template


def detect(template: Template) -> bool:
    """The template asks for thoughts in <think></think> and the answer in <response></response>."""
    return GRANITE_THINKING in template.source


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, then content."""
    return autoparser.build(b, req, template.reasoning, None, template.content)


SYNTAX = Syntax("granite", AUTOPARSER, detect, build, order=68)
