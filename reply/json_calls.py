"""Calls written as JSON objects, as llama.cpp's autoparser reads them: where the template puts the JSON
(analyze_tool_call_format_json_native in common/chat-diff-analyzer.cpp, replayed with jinja2 probe renders)
and the grammar it builds (build_tool_parser_json_native and standard_json_tools, flat keys)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from reply import autoparser
from reply.analysis import (
    ASSISTANT_MSG,
    UNWRAPPED,
    USER_MSG,
    Content,
    Reasoning,
    analyze_reasoning,
    diff_split,
    trim_whitespace,
)
from reply.autoparser import ToolFormat, ToolMode
from reply.chat import ChatBuilder, JsonLayout
from reply.peg import Parser
from reply.rendering import render
from reply.request import Request
from reply.template import Template

FUN_FIRST, FUN_SECOND = "FFF_FIRST_FUN_F", "SSS_SECOND_FUN_S"
ARG_FIRST, ARG_SECOND = "AA_ARG_FST_AA", "BB_ARG_SND_BB"
CALL_ID = "call00001"
OPENAI_WRAPPER_HINTS = ('Respond in the format {"name": function name', "Do not use variables.")
_SCHEMA = {"type": "object", "properties": {ARG_FIRST: {"type": "string", "description": "First argument"},
                                            ARG_SECOND: {"type": "string", "description": "Second argument"}},
           "required": []}
PROBE_TOOLS = [{"type": "function", "function": {"name": name, "description": "Test function", "parameters": _SCHEMA}}
               for name in (FUN_FIRST, FUN_SECOND)]
USER = {"role": "user", "content": USER_MSG}
PLAIN = {"role": "assistant", "content": ASSISTANT_MSG}
SPACE = " \t\n\v\f\r"
NEMOTRON_V2_PATCH = ("<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<TOOL_RESPONSE>")


def probe_call(name: str, call_id: str) -> dict[str, Any]:
    """One probe call with both arguments."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": {ARG_FIRST: "XXXX", ARG_SECOND: "YYYY"}}}


def calls_turn(*calls: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn holding these calls."""
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


def apply(template: Template, messages: list[dict[str, Any]]) -> str | None:
    """The analyzer's probe render (no generation prompt, thinking on); None when the template raises."""
    try:
        return render(template.source, bos=template.bos, eos=template.eos, messages=messages, tools=PROBE_TOOLS,
                      add_generation_prompt=False, enable_thinking=True, extra={"enable_thinking": True})
    except Exception:  # noqa: BLE001 - a template may raise anything; the analysis then skips the probe
        return None


def call_haystack(template: Template) -> str:
    """What a turn with one call writes in place of a plain answer (the analyzer's tool section)."""
    plain = apply(template, [USER, PLAIN])
    called = apply(template, [USER, calls_turn(probe_call(FUN_FIRST, CALL_ID))])
    if plain is None or called is None:
        return ""
    return diff_split(plain, called).right


@dataclass(frozen=True)
class JsonCalls:
    """Where and how a template writes its JSON calls, named as llama.cpp's analysis names them."""

    section_start: str = ""
    section_end: str = ""
    per_call_start: str = ""
    per_call_end: str = ""
    name_field: str = "name"
    args_field: str = "arguments"
    id_field: str = ""
    gen_id_field: str = ""
    parameter_order: tuple[str, ...] = ()
    array_wrapped: bool = False
    openai_wrapper: bool = False

    @property
    def tool_start(self) -> str:
        """Where content stops."""
        return self.section_start or self.per_call_start or "{"

    @property
    def tool_format(self) -> ToolFormat:
        """The markers as the autoparser's grammar takes them."""
        return ToolFormat(ToolMode.JSON_NATIVE, section_start=self.section_start, section_end=self.section_end,
                          per_call_start=self.per_call_start, per_call_end=self.per_call_end, json=self.layout)

    @property
    def layout(self) -> JsonLayout:
        """The call object's layout for the grammar builder."""
        return JsonLayout(name_key=self.name_field, args_key=self.args_field, array_wrapped=self.array_wrapped,
                          id_field=self.id_field, gen_id_field=self.gen_id_field,
                          parameter_order=self.parameter_order, openai_wrapper=self.openai_wrapper)


def quoted_in_json(haystack: str, needle: str) -> bool:
    """Whether `needle` appears as a JSON string after `{` or `:` (the analyzer's in_json_haystack)."""
    return re.search(r'[{:][ \t\n\v\f\r]*"' + re.escape(needle) + '"', haystack) is not None


def _remove_once(text: str, marker: str) -> str:
    pos = text.find(marker) if marker else -1
    return text if pos < 0 else text[:pos] + text[pos + len(marker):]


def _parallel_moves_section(template: Template, section_start: str) -> bool:
    one = apply(template, [USER, calls_turn(probe_call(FUN_FIRST, CALL_ID))])
    two = apply(template, [USER, calls_turn(probe_call(FUN_FIRST, CALL_ID), probe_call(FUN_SECOND, "call00002"))])
    if one is None or two is None or FUN_SECOND not in two:
        return False
    return bool(section_start) and section_start in diff_split(one, two).right


@lru_cache(maxsize=64)
def _analyze(source: str, bos: str, eos: str) -> JsonCalls | None:
    if all(m in source for m in NEMOTRON_V2_PATCH):
        return None
    template = Template(source, bos, eos)
    haystack = call_haystack(template)
    if not haystack or not quoted_in_json(haystack, FUN_FIRST):
        return None
    reasoning = analyze_reasoning(source, bos, eos)
    clean = _remove_once(_remove_once(haystack, reasoning.start), reasoning.end)
    json_start, json_end = clean.find("{"), clean.rfind("}")
    try:
        call = json.loads(clean[json_start:json_end + 1])
    except ValueError:
        return None
    if not isinstance(call, dict) or FUN_FIRST in call:
        return None
    fields: dict[str, str] = {}
    for key, value in sorted(call.items()):
        if isinstance(value, dict) and ARG_FIRST not in json.dumps(value):
            return None
        if isinstance(value, str) and "call0000" in value:
            fields["id"] = key
        elif isinstance(value, str) and value == FUN_FIRST:
            fields["name"] = key
        elif ARG_FIRST in json.dumps(value):
            fields["args"] = key
        elif "id" in key:
            fields["gen_id"] = key
    if "name" not in fields or "args" not in fields:
        return None
    cut = clean[json_start:json_end + 1]
    wrapped = re.search(r"\[([ \t\n\v\f\r]*)" + re.escape(cut) + r"([ \t\n\v\f\r]*)\]", clean)
    if wrapped:
        json_start, json_end = wrapped.start(), wrapped.end() - 1
    order = sorted((clean.find(f), f) for f in fields.values())
    section_start = clean[:json_start].lstrip(SPACE)
    section_end = trim_whitespace(clean[json_end + 1:])
    if wrapped and section_end == "]":
        section_end = ""
    per_call_start = per_call_end = ""
    if _parallel_moves_section(template, section_start):
        section_start, section_end, per_call_start, per_call_end = "", "", section_start, section_end
    return JsonCalls(section_start=section_start, section_end=section_end,
                     per_call_start=per_call_start, per_call_end=per_call_end,
                     name_field=fields["name"], args_field=fields["args"], id_field=fields.get("id", ""),
                     gen_id_field=fields.get("gen_id", ""), parameter_order=tuple(f for _, f in order),
                     array_wrapped=wrapped is not None,
                     openai_wrapper=all(h in source for h in OPENAI_WRAPPER_HINTS))


def analyze(template: Template) -> JsonCalls | None:
    """The template's JSON call layout (flat keys), or None when it writes no such call or llama.cpp patches
    its analysis (Nemotron Nano v2's markers)."""
    return _analyze(template.source, template.bos, template.eos)


def build(b: ChatBuilder, req: Request, reasoning: Reasoning, fmt: JsonCalls, content: Content = UNWRAPPED) -> Parser:
    """The autoparser's grammar for JSON calls: prefix, reasoning, content up to the calls, the calls."""
    return autoparser.build(b, req, reasoning, fmt.tool_format, content)


def build_for_template(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """The grammar for the JSON calls the template itself writes, with its reasoning and content wrapping."""
    fmt = analyze(template)
    assert fmt is not None
    return build(b, req, template.reasoning, fmt, template.content)
