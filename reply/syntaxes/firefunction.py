"""FireFunction v2 calls read by the autoparser: ` functools[{"name": …, "arguments": {…}}, …]`, a JSON list
after the word with no closing marker."""

from __future__ import annotations

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder, JsonLayout
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

FORMAT = ToolFormat(ToolMode.JSON_NATIVE, section_start="functools", json=JsonLayout(array_wrapped=True))


def detect(template: Template) -> bool:
    """The template writes its calls as ` functools[…]`."""
    return " functools[" in template.source


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Content up to `functools`, then the list of calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [FORMAT.section_start] if req.use_tools else []


SYNTAX = Syntax("firefunction", AUTOPARSER, detect, build, call_starts, order=67)
