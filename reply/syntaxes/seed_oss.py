"""Seed-OSS calls read by the autoparser: `<seed:tool_call>\\n<function=x>\\n<parameter=k>v</parameter>\\n…
</function>\\n</seed:tool_call>`, each call in its own tags; string parameters taken raw, others as JSON."""

from __future__ import annotations

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_ARG, PROBE_ARG_TWO, PROBE_FUNCTION, Template

FORMAT = ToolFormat(ToolMode.TAG_WITH_TAGGED, per_call_start="<seed:tool_call>\n", per_call_end="</seed:tool_call>",
                    name_prefix="<function=", name_suffix=">\n", close="</function>\n", arg_name_prefix="<parameter=",
                    arg_name_suffix=">", arg_value_suffix="</parameter>\n")
PROBE_CALL = (f"<seed:tool_call>\n<function={PROBE_FUNCTION}>\n<parameter={PROBE_ARG}>XXXX</parameter>\n"
              f"<parameter={PROBE_ARG_TWO}>YYYY</parameter>\n</function>\n</seed:tool_call>")


def detect(template: Template) -> bool:
    """The template writes the probe call in Seed's function/parameter tags."""
    return PROBE_CALL in template.call_turn


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <seed:tool_call>, then the calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT, template.content)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    return [FORMAT.per_call_start] if req.use_tools else []


SYNTAX = Syntax("seed_oss", AUTOPARSER, detect, build, call_starts, order=71)
