"""DeepSeek V3.1 calls read by the autoparser:
`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>x<｜tool▁sep｜>{json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`."""

from __future__ import annotations

import re

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.syntaxes.deepseek_v3 import CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, SEP
from reply.template import PROBE_FUNCTION, Template

CALL = re.compile(re.escape(CALL_BEGIN) + PROBE_FUNCTION + re.escape(SEP) + r"\{")

FORMAT = ToolFormat(ToolMode.TAG_WITH_JSON, section_start=CALLS_BEGIN, section_end=CALLS_END,
                    per_call_start=CALL_BEGIN, per_call_end=CALL_END, name_suffix=SEP)


def detect(template: Template) -> bool:
    """The template writes name<｜tool▁sep｜>{json} right after <｜tool▁call▁begin｜>."""
    return CALL.search(template.call_turn) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <｜tool▁calls▁begin｜>, then the calls."""
    return autoparser.build(b, req, template.reasoning, FORMAT)


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [CALLS_BEGIN]


SYNTAX = Syntax("deepseek_v31", AUTOPARSER, detect, build, call_starts, order=130)
