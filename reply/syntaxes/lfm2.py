"""LFM2 / LFM2.5 Python-style calls (route lfm2, both the tool_list_tokens and the plain "List of tools"
variants), after common/parsers/lfm2.cpp: `<|tool_call_start|>[x(k="v", n=4), y()]<|tool_call_end|>` after
optional `<think>…</think>` reasoning; values are Python or JSON literals."""

from __future__ import annotations

from typing import Any

from reply.chat import ChatBuilder, tool_parameters
from reply.peg import Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

CALL_START, CALL_END = "<|tool_call_start|>", "<|tool_call_end|>"
THINK_START, THINK_END = "<think>", "</think>"
GEN_PROMPT = "<|im_start|>assistant\n"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to lfm2."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start (nowhere when no tools are offered)."""
    return [CALL_START] if req.use_tools else []


def held_markers(template: Template, req: Request) -> list[str]:
    """None: the grammar's own scans stop before every marker's start, so llama.cpp takes nothing back."""
    return []


def python_string(b: ChatBuilder) -> Parser:
    """A double- or single-quoted string (common_peg_parser_builder::python_string)."""
    return b.rule("python-string", lambda: b.choice(
        b.rule("double-quoted-string", lambda: b.seq('"', b.string_content('"'), '"')),
        b.rule("single-quoted-string", lambda: b.seq("'", b.string_content("'"), "'"))))


def python_or_json_value(b: ChatBuilder) -> Parser:
    """A Python literal whose leaves may also be JSON's true/false/null (python_or_json_value)."""

    def make() -> Parser:
        ws = b.space()
        value = python_or_json_value(b)
        member = b.seq(python_string(b), ws, ":", ws, value)
        members = b.seq(member, b.zero_or_more(b.seq(ws, ",", ws, member)))
        mapping = b.rule("python-or-json-dict",
                         lambda: b.seq("{", ws, b.choice("}", b.seq(members, ws, "}")), ws))
        elements = b.seq(value, b.zero_or_more(b.seq(",", ws, value)))
        array = b.rule("python-or-json-array",
                       lambda: b.seq("[", ws, b.choice("]", b.seq(elements, ws, "]")), ws))
        return b.choice(mapping, array, python_string(b), b.json_number(),
                        b.rule("python-bool", lambda: b.choice("True", "False")),
                        b.rule("python-none", lambda: b.lit("None")),
                        b.rule("json-bool", lambda: b.choice("true", "false")),
                        b.rule("json-null", lambda: b.lit("null")))

    return b.rule("python-or-json-value", make)


def _call(b: ChatBuilder, function: dict[str, Any]) -> Parser:
    name = function["name"]
    properties = tool_parameters(function).get("properties") or {}
    args = b.eps()
    if properties:
        arg_choices = []
        for key, prop in properties.items():
            if isinstance(prop, dict) and prop.get("type") == "string":
                value = b.tool_arg_value(b.choice(b.seq('"', b.string_content('"'), '"'),
                                                  b.seq("'", b.string_content("'"), "'")))
            else:
                value = b.tool_arg_value(python_or_json_value(b))
            opening = b.tool_arg_open(b.seq(b.tool_arg_name(b.lit(key)), "="))
            arg_choices.append(b.tool_arg(b.seq(opening, value, b.tool_arg_close(b.eps()))))
        arg = b.choice(*arg_choices)
        args = b.seq(arg, b.zero_or_more(b.seq(",", b.space(), arg)))
    call = b.tool(b.seq(b.tool_open(b.seq(b.tool_name(b.lit(name)), "(")), b.space(), b.tool_args(args),
                        b.space(), b.tool_close(b.lit(")"))))
    return b.rule(f"tool-{name}", call)


def python_style_tool_calls(b: ChatBuilder, tools: list[dict[str, Any]], parallel: bool) -> Parser:
    """`[name(k=v, …), …]` over the offered tools (common_chat_peg_builder::python_style_tool_calls)."""
    functions = [tool["function"] for tool in tools if "function" in tool]
    if not functions:
        return b.eps()
    calls = b.choice(*(_call(b, function) for function in functions))
    if parallel:
        return b.seq("[", b.space(), calls, b.zero_or_more(b.seq(",", b.space(), calls)), b.space(), "]")
    return b.seq("[", b.space(), calls, b.space(), "]")


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_lfm2's grammar."""
    prefix = b.lit(GEN_PROMPT)
    reasoning = b.eps()
    if req.extract_reasoning and THINK_START in template.source:
        reasoning = b.optional(b.seq(THINK_START, b.reasoning(b.until(THINK_END)), THINK_END))
    if not req.use_tools:
        return b.seq(prefix, reasoning, b.content(b.rest()), b.end())
    tool_calls = b.rule("tool-calls", b.rule("tool-call", b.seq(
        CALL_START, python_style_tool_calls(b, req.tools, req.parallel), CALL_END)))
    return b.seq(prefix, reasoning, b.content(b.until(CALL_START)), tool_calls, b.end())


SYNTAX = Syntax("lfm2", "lfm2", detect, build, call_starts, held_markers=held_markers)
