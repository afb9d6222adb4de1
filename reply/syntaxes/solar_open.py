"""Solar Open calls read by the autoparser: `<|tool_calls|><|tool_call:begin|>id<|tool_call:name|>x
<|tool_call:args|>{…}<|tool_call:end|><|calls|>`. llama.cpp's analysis takes the probe's call id into the name
prefix, so only a call whose id is `call00001` reads as a call (and its id is not returned)."""

from __future__ import annotations

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_FUNCTION, Template

PROBE_ID = "call00001"
FORMAT = ToolFormat(ToolMode.TAG_WITH_JSON, section_start="<|tool_calls|>", section_end="<|calls|>",
                    per_call_start="<|tool_call:begin|>", per_call_end="<|tool_call:end|>",
                    name_prefix=PROBE_ID + "<|tool_call:name|>", name_suffix="<|tool_call:args|>")
PROBE_CALL = f"<|tool_calls|><|tool_call:begin|>{PROBE_ID}<|tool_call:name|>{PROBE_FUNCTION}<|tool_call:args|>{{"


def detect(template: Template) -> bool:
    """The template writes the probe call in Solar's tool_call tags."""
    return PROBE_CALL in template.call_turn


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Content up to <|tool_calls|>, then the calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [FORMAT.section_start] if req.use_tools else []


SYNTAX = Syntax("solar_open", AUTOPARSER, detect, build, call_starts, order=73)
