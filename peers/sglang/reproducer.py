"""A few lines of Python that replay one case with SGLang's parsers alone (no harness, no llama.cpp), as its
server chains them: the reasoning parser first, its normal text through the tool-call parser."""

from __future__ import annotations

import json
from typing import Any

from chatparity.model import Session
from peers.sglang.adapter import Choice

CHARACTER_GROUPS = {"char": 1, "char2": 2, "char3": 3}

HEADER = """# SGLang {version}: {signature}
# case {case} ({template}, {mode}, {chunking}); llama.cpp reads {expected}
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

text = {text}
tools = [Tool.model_validate(tool) for tool in {tools}]
"""
WHOLE = """reasoning, rest = {reasoning}
print(repr(reasoning), FunctionCallParser(tools, {tool}).parse_non_stream(rest))
"""
WHOLE_NO_CALLS = """print({reasoning})
"""
STREAM = """chunks = [text[i:i + {size}] for i in range(0, len(text), {size})]
{make_reasoning}calls = FunctionCallParser(tools, {tool})
for chunk in chunks:
    {feed}
    print(repr(chunk), calls.parse_stream_chunk(normal))
print("end", calls.parse_stream_end())
"""


def called_names(reading: str | None) -> list[str]:
    """The tool names a stored reading calls."""
    data = json.loads(reading) if reading else {}
    return list(dict.fromkeys(call["name"] for call in data.get("tool_calls", [])))


def tools_of(row: Any, session: Session | None) -> list[dict[str, Any]]:
    """The session's tools, else a bare tool for each name the readings call."""
    if session is not None:
        return session.tools
    names = called_names(row.oracle_reading) or called_names(row.parser_reading)
    return [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}} for name in names
    ]


def reproducer(
    choice: Choice, row: Any, session: Session | None, force: bool | None, signature: str, version: str
) -> str | None:
    """The replay of a row's reply, whole or in the character groups of its chunking, with the force_reasoning
    the adapter found for its session (None for chunkings that cannot be rebuilt from the reply alone, token
    chunkings, which need `chatparity show`, or a setting not known)."""
    if force is None or (row.chunking != "whole" and row.chunking not in CHARACTER_GROUPS):
        return None
    code = HEADER.format(
        version=version,
        signature=signature,
        case=row.case_id,
        template=row.template,
        mode=row.mode,
        chunking=row.chunking,
        expected=row.oracle_reading,
        text=repr(row.reply),
        tools=repr(tools_of(row, session)),
    )
    if row.chunking == "whole":
        reasoning = (
            f"ReasoningParser({choice.reasoning!r}, stream_reasoning=False, force_reasoning={force})"
            ".parse_non_stream(text)"
            if choice.reasoning
            else '"", text'
        )
        if not choice.tool:
            return code + WHOLE_NO_CALLS.format(reasoning=reasoning)
        return code + WHOLE.format(reasoning=reasoning, tool=repr(choice.tool))
    if not choice.tool:
        return None
    make = (
        f"reasoner = ReasoningParser({choice.reasoning!r}, stream_reasoning=True, force_reasoning={force})\n"
        if choice.reasoning
        else ""
    )
    feed = "thought, normal = reasoner.parse_stream_chunk(chunk)" if choice.reasoning else "normal = chunk"
    return code + STREAM.format(
        size=CHARACTER_GROUPS[row.chunking], make_reasoning=make, tool=repr(choice.tool), feed=feed
    )
