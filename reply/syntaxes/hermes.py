"""Hermes: `<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>`, each call in its own tags."""

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

CALL = re.compile(r'(<tool_call>\s*)\{\s*"name"\s*:\s*"' + PROBE_FUNCTION + r'"\s*,\s*"arguments"')


@lru_cache(maxsize=64)
def _format(template: Template) -> ToolFormat | None:
    found = CALL.search(template.call_turn)
    if found is None or "</tool_call>" not in template.call_turn[found.end():]:
        return None
    return ToolFormat(ToolMode.JSON_NATIVE, per_call_start=found.group(1), per_call_end="</tool_call>")


def detect(template: Template) -> bool:
    """The template writes a call as a JSON object inside <tool_call> tags."""
    return _format(template) is not None


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """Reasoning, content up to the first <tool_call>, then the calls."""
    return autoparser.build(b, req, template.reasoning, _format(template))


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts."""
    fmt = _format(template)
    return [fmt.per_call_start] if fmt else []


SYNTAX = Syntax("hermes", AUTOPARSER, detect, build, call_starts, order=100)
