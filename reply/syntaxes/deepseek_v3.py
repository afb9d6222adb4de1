"""DeepSeek V3 / R1 calls read by the autoparser:
`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>x\\n```json\\n{…}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`."""

from __future__ import annotations

import re
from functools import lru_cache

from reply import autoparser
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder
from reply.peg import Parser
from reply.request import Request
from reply.routes import AUTOPARSER
from reply.syntaxes import Syntax
from reply.template import PROBE_FUNCTION, Template

CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
CALL = re.compile(re.escape(CALL_BEGIN) + "(function)" + re.escape(SEP) + PROBE_FUNCTION + r"(\s*```json\s*)\{")
DISTILL_QWEN = "{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>'"


@lru_cache(maxsize=64)
def _format(template: Template) -> ToolFormat | None:
    found = CALL.search(template.call_turn)
    if found is None:
        return None
    if DISTILL_QWEN in template.source:
        start, prefix = CALL_BEGIN + "function", SEP
    else:
        start, prefix = CALL_BEGIN, "function" + SEP
    return ToolFormat(ToolMode.TAG_WITH_JSON, section_start=CALLS_BEGIN, section_end=CALLS_END,
                      per_call_start=start, per_call_end=CALL_END, name_prefix=prefix,
                      name_suffix=found.group(2), close="```")


def detect(template: Template) -> bool:
    """The template writes function<｜tool▁sep｜>name and a ```json block."""
    return _format(template) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to <｜tool▁calls▁begin｜>, then the calls."""
    return autoparser.build(b, req, template.reasoning, _format(template))


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start."""
    return [CALLS_BEGIN]


SYNTAX = Syntax("deepseek_v3", AUTOPARSER, detect, build, call_starts, order=120)
