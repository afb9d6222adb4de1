"""Functionary v3.1 calls, as llama.cpp's Functionary 3.1 patch sets them: `<function=name>{…}</function>`,
one after another with no section around them."""

from __future__ import annotations

import re

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_FUNCTION, Template

PATCH = 'set has_code_interpreter = tools | selectattr("type", "equalto", "code_interpreter") | list | length > 0'
CALL = re.compile("<function=" + PROBE_FUNCTION + r">\{")
FORMAT = ToolFormat(ToolMode.TAG_WITH_JSON, per_call_start="<function=", per_call_end="</function>",
                    name_suffix=">")


def detect(template: Template) -> bool:
    """The template holds the marker llama.cpp's patch looks for and writes `<function=name>{…}`."""
    return PATCH in template.source and CALL.search(template.call_turn) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Content up to <function=, then the calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return [FORMAT.per_call_start] if req.use_tools else []


SYNTAX = Syntax("functionary_v31", AUTOPARSER, detect, build, call_starts, order=69)
