"""Nemotron Nano v2 calls, as llama.cpp's Nemotron Nano v2 patch sets them: `<TOOLCALL>[{"name": …,
"arguments": {…}}, …]</TOOLCALL>`, reasoning in <think>…</think>."""

from __future__ import annotations

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder, JsonLayout
from reply.json_calls import NEMOTRON_V2_PATCH
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import Template

FORMAT = ToolFormat(ToolMode.JSON_NATIVE, per_call_start="<TOOLCALL>", per_call_end="</TOOLCALL>",
                    json=JsonLayout(array_wrapped=True))


def detect(template: Template) -> bool:
    """The template holds the markers llama.cpp's patch looks for."""
    return all(marker in template.source for marker in NEMOTRON_V2_PATCH)


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <TOOLCALL>, then one or more call lists."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [FORMAT.per_call_start] if req.use_tools else []


SYNTAX = Syntax("nemotron_v2", AUTOPARSER, detect, build, call_starts, order=66)
