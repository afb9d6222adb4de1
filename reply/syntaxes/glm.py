"""GLM calls read by the autoparser (GLM-4.6, GLM-4.7, Spark2.5, Laguna):
`<tool_call>x<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`, with the template's own whitespace
between tags; string parameters are taken raw, others parsed as JSON."""

from __future__ import annotations

import re
from functools import lru_cache

from reply import autoparser
from reply.analysis import trim_whitespace
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_FUNCTION, Template

WS = r"[ \t\n\r\v\f]*"
CALL = re.compile(r"<tool_call>(" + WS + ")" + PROBE_FUNCTION + "(" + WS + r")<arg_key>" + PROBE_ARG
                  + r"</arg_key>(" + WS + r")<arg_value>(" + WS + r")XXXX(" + WS + r")</arg_value>(" + WS + ")")


@lru_cache(maxsize=64)
def _format(template: Template) -> ToolFormat | None:
    found = CALL.search(template.call_turn)
    if found is None:
        return None
    _, name_ws, key_ws, value_ws, _, after_ws = found.groups()
    value_prefix, value_suffix = "<arg_value>" + value_ws, "</arg_value>" + after_ws
    laguna = "laguna_glm_thinking" in template.source
    if laguna:
        value_prefix, value_suffix = trim_whitespace(value_prefix), trim_whitespace(value_suffix)
    return ToolFormat(ToolMode.TAG_WITH_TAGGED, per_call_start="<tool_call>", per_call_end="</tool_call>",
                      name_suffix=name_ws, arg_name_prefix="<arg_key>", arg_name_suffix="</arg_key>" + key_ws,
                      arg_value_prefix=value_prefix, arg_value_suffix=value_suffix,
                      tolerate_intertag_whitespace=laguna)


def detect(template: Template) -> bool:
    """The template writes <tool_call>name<arg_key>…</arg_key><arg_value>…</arg_value>."""
    return _format(template) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <tool_call>, then the calls."""
    return autoparser.build(b, req, template.reasoning, _format(template))


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return ["<tool_call>"]


SYNTAX = Syntax("glm", AUTOPARSER, detect, build, call_starts, order=110)
