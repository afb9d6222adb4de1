"""Hy3 calls read by the autoparser: GLM-like tags with an `:opensource` suffix, `<tool_calls:opensource>\\n
<tool_call:opensource>x<tool_sep:opensource>\\n<arg_key:opensource>k</arg_key:opensource>\\n
<arg_value:opensource>v</arg_value:opensource>\\n…</tool_call:opensource>\\n</tool_calls:opensource>`."""

from __future__ import annotations

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_ARG_TWO, PROBE_FUNCTION, Template

FORMAT = ToolFormat(ToolMode.TAG_WITH_TAGGED, section_start="<tool_calls:opensource>\n",
                    section_end="</tool_calls:opensource>", per_call_start="<tool_call:opensource>",
                    args_separator="<tool_sep:opensource>", close="</tool_call:opensource>\n",
                    arg_name_prefix="<arg_key:opensource>", arg_name_suffix="</arg_key:opensource>\n",
                    arg_value_prefix="<arg_value:opensource>", arg_value_suffix="</arg_value:opensource>\n")
PROBE_CALL = (f"<tool_calls:opensource>\n<tool_call:opensource>{PROBE_FUNCTION}<tool_sep:opensource>\n"
              f"<arg_key:opensource>{PROBE_ARG}</arg_key:opensource>\n<arg_value:opensource>XXXX</arg_value:opensource>\n"
              f"<arg_key:opensource>{PROBE_ARG_TWO}</arg_key:opensource>\n"
              f"<arg_value:opensource>YYYY</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>")


def detect(template: Template) -> bool:
    """The template writes the probe call in Hy3's `:opensource` tags."""
    return PROBE_CALL in template.call_turn


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <tool_calls:opensource>, then the calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [FORMAT.section_start] if req.use_tools else []


SYNTAX = Syntax("hy3", AUTOPARSER, detect, build, call_starts, order=72)
