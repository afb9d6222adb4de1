"""MiniMax-M2 calls read by the autoparser: `<minimax:tool_call>\\n<invoke name="x">\\n<parameter name="k">v
</parameter>\\n…</invoke>\\n</minimax:tool_call>`; string parameters taken raw, others parsed as JSON."""

from __future__ import annotations

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_ARG_TWO, PROBE_FUNCTION, Template

FORMAT = ToolFormat(ToolMode.TAG_WITH_TAGGED, section_start="<minimax:tool_call>\n",
                    section_end="</minimax:tool_call>", name_prefix='<invoke name="', name_suffix='">\n',
                    close="</invoke>\n", arg_name_prefix='<parameter name="', arg_value_prefix='">',
                    arg_value_suffix="</parameter>\n")
PROBE_CALL = (f'<minimax:tool_call>\n<invoke name="{PROBE_FUNCTION}">\n<parameter name="{PROBE_ARG}">XXXX</parameter>\n'
              f'<parameter name="{PROBE_ARG_TWO}">YYYY</parameter>\n</invoke>\n</minimax:tool_call>')


def detect(template: Template) -> bool:
    """The template writes the probe call in MiniMax's invoke/parameter tags."""
    return PROBE_CALL in template.call_turn


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <minimax:tool_call>, then the calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [FORMAT.section_start] if req.use_tools else []


SYNTAX = Syntax("minimax_m2", AUTOPARSER, detect, build, call_starts, order=70)
