"""Apertus calls read by the autoparser: `<|tools_prefix|>[{"name": {…arguments…}}, …]<|tools_suffix|>`, the
function name as the key of each call object."""

from __future__ import annotations

import re

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder, JsonLayout
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_FUNCTION, Template

START, END = "<|tools_prefix|>", "<|tools_suffix|>"
CALL = re.compile(re.escape(START) + r'\[\{"' + PROBE_FUNCTION + r'"\s*:\s*\{.*\}\}\]' + re.escape(END), re.DOTALL)
FORMAT = ToolFormat(ToolMode.JSON_NATIVE, section_start=START, section_end=END,
                    json=JsonLayout(args_key="", array_wrapped=True, fun_name_is_key=True))


def detect(template: Template) -> bool:
    """The template writes a list of {name: arguments} objects between the tools prefix and suffix."""
    return CALL.search(template.call_turn) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Content up to the tools prefix, then the list of calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [START] if req.use_tools else []


SYNTAX = Syntax("apertus", AUTOPARSER, detect, build, call_starts, order=65)
