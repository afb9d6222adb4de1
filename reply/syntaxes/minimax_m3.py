"""MiniMax M3 calls (route minimax_m3), after common/parsers/minimax-m3.cpp and its AST mapper
(common_chat_peg_minimax_m3_mapper): `<mm:think>…</mm:think>` reasoning (or a bare `</mm:think>`), content,
then `]<]minimax[>[<tool_call>` holding `]<]minimax[>[<invoke name="x">` whose arguments are XML elements
named by the parameter, `]<]minimax[>[<k>v]<]minimax[>[</k>`, objects and arrays (`<item>`) nested as the
schema says, strings raw and other values JSON."""

from __future__ import annotations

import json
from typing import Any

from reply.chat import (
    CONTENT,
    REASONING,
    TOOL,
    TOOL_ARG,
    TOOL_ARG_NAME,
    TOOL_ARG_STRING_VALUE,
    TOOL_ARG_VALUE,
    TOOL_NAME,
    Call,
    ChatBuilder,
    Mapped,
    Tail,
    escape_inner,
    tool_parameters,
)
from reply.peg import Node, Parser
from reply.request import Request
from reply.schema import FORMATS, may_be_string
from reply.syntaxes import Syntax
from reply.template import Template

NS = "]<]minimax[>["
THINK_START, THINK_END = "<mm:think>", "</mm:think>"
FC_START, FC_END = NS + "<tool_call>", NS + "</tool_call>"
INVOKE_END = NS + "</invoke>"
TOOL_ARG_OBJECT = "tool-arg-object"
TOOL_ARG_ARRAY = "tool-arg-array"
TOOL_ARG_ITEM = "tool-arg-item"
VALUE_TAGS = (TOOL_ARG_VALUE, TOOL_ARG_STRING_VALUE, TOOL_ARG_OBJECT, TOOL_ARG_ARRAY)
FIND_DEPTH = 3


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to minimax_m3."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where the calls start (none when no call may be made)."""
    return [FC_START] if req.use_tools else []


def schema_kind(schema: Any) -> str:
    """The node kind common_chat_schema_from_json builds for a schema (common/json-schema.cpp)."""
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema:
        return "ref"
    if "oneOf" in schema or "anyOf" in schema or isinstance(schema.get("type"), list):
        return "any_of"
    if "const" in schema:
        return "const"
    if "enum" in schema:
        return "enum"
    kind = schema.get("type")
    has_properties = "properties" in schema or (
        "additionalProperties" in schema and schema["additionalProperties"] is not True)
    if kind is None:
        if has_properties:
            return "object"
        if "allOf" in schema:
            return "all_of"
        if "items" in schema or "prefixItems" in schema:
            return _array_kind(schema)
        if any(k in schema for k in ("pattern", "minLength", "maxLength")) or schema.get("format") in FORMATS:
            return "string"
        return "any"
    if kind == "object":
        return "all_of" if not has_properties and "allOf" in schema else "object"
    if kind == "string":
        return "all_of" if "allOf" in schema else "string"
    if kind == "array":
        return _array_kind(schema)
    return str(kind)


def _array_kind(schema: dict[str, Any]) -> str:
    items = schema.get("items", schema.get("prefixItems"))
    return "tuple" if isinstance(items, list) else "array"


def alternatives(schema: dict[str, Any]) -> list[Any]:
    """The children of an any-of schema (`oneOf`, `anyOf`, or one per entry of a `type` list)."""
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return list(schema[key])
    return [{**schema, "type": kind} for kind in schema["type"]]


class Grammar:
    """The per-function argument grammar: values expanded in XML as the template's to_xml() macro writes them."""

    def __init__(self, b: ChatBuilder, root: dict[str, Any]) -> None:
        self.b = b
        self.root = root

    def element(self, tag: str, schema: Any, rule_name: str) -> Parser:
        """`NS<tag>` value `NS</tag>`, one tagged argument."""
        b = self.b
        opening = b.tool_arg_open(b.seq(NS + "<", b.tool_arg_name(b.lit(tag)), ">"))
        return b.rule(rule_name, b.tool_arg(b.seq(opening, self.value(schema, rule_name, f"{NS}</{tag}>"))))

    def value(self, schema: Any, rule_name: str, close: str) -> Parser:
        """A value of this schema up to and including `close`."""
        b = self.b
        close_tag = b.tool_arg_close(b.lit(close))
        if may_be_string(schema, self.root):
            return b.seq(b.tool_arg_string_value(b.until(close)), close_tag)
        kind = schema_kind(schema)
        if kind == "any_of":
            return b.choice(*[self.value(alt, f"{rule_name}-{i}", close)
                              for i, alt in enumerate(alternatives(schema))])
        if kind == "object" and schema.get("properties"):
            return b.seq(b.tag(TOOL_ARG_OBJECT, self.members(schema, rule_name)), b.space(), close_tag)
        if kind == "array":
            items = schema.get("items", schema.get("prefixItems", {}))
            item = b.rule(f"{rule_name}-item", b.tag(TOOL_ARG_ITEM, b.seq(
                NS + "<item>", self.value(items, f"{rule_name}-item", NS + "</item>"))))
            return b.seq(b.tag(TOOL_ARG_ARRAY, b.repeat(b.seq(b.space(), item), 0, -1)), b.space(), close_tag)
        return b.seq(b.tool_arg_value(b.json()), close_tag)

    def members(self, schema: dict[str, Any], rule_prefix: str) -> Parser:
        """Required properties in schema order, then any number of optional ones in any order."""
        b = self.b
        required_names = set(schema.get("required") or [])
        required: list[Parser] = []
        optional: list[Parser] = []
        for name, prop in (schema.get("properties") or {}).items():
            element = self.element(name, prop, f"{rule_prefix}-{name}")
            (required if name in required_names else optional).append(element)
        parts: list[Parser] = []
        for i, element in enumerate(required):
            if i:
                parts.append(b.space())
            parts.append(element)
        if optional:
            parts.append(b.repeat(b.seq(b.space(), b.choice(*optional)), 0, -1))
        return b.seq(*parts) if parts else b.eps()


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_minimax_m3's grammar."""
    prefix = b.prefix(req.generation_prompt, THINK_START)
    reasoning = b.eps()
    if req.extract_reasoning:
        if req.enable_thinking:
            block = b.seq(THINK_START, b.space(), b.reasoning(b.until(THINK_END)), THINK_END)
        else:
            block = b.seq(THINK_START, b.until(THINK_END), THINK_END)
        reasoning = b.optional(b.choice(block, b.lit(THINK_END)))
    if not req.use_tools:
        return b.seq(prefix, reasoning, b.content(b.rest()), b.end())
    choices = []
    for tool in req.tools:
        function = tool["function"]
        name = function["name"]
        params = tool_parameters(function)
        body = b.eps()
        if schema_kind(params) == "object":
            body = Grammar(b, params).members(params, f"tool-{name}-arg")
        opening = b.tool_open(b.seq(f'{NS}<invoke name="', b.tool_name(b.lit(name)), '">'))
        call = b.tool(b.seq(opening, b.space(), body, b.space(), b.tool_close(b.lit(INVOKE_END))))
        choices.append(b.rule(f"tool-{name}", call))
    choice = b.choice(*choices)
    if req.parallel:
        calls = b.seq(FC_START, b.space(), choice, b.zero_or_more(b.seq(b.space(), choice)), b.space(), FC_END)
    else:
        calls = b.seq(FC_START, b.space(), choice, b.space(), FC_END)
    tool_calls = b.rule("tool-call", calls)
    if not req.required:
        tool_calls = b.optional(tool_calls)
    return b.seq(prefix, reasoning, b.content(b.until(FC_START)), tool_calls, b.end())


def _find(node: Node, tag: str, depth: int = FIND_DEPTH) -> Node | None:
    """common_peg_ast_arena::find_by_tag: the first descendant with the tag, at most `depth` levels down."""
    for child in node.children:
        if child.tag == tag:
            return child
        if depth > 1:
            found = _find(child, tag, depth - 1)
            if found is not None:
                return found
    return None


def _collect(node: Node, tag: str) -> list[Node]:
    """The outermost descendants with the tag."""
    out = []
    for child in node.children:
        if child.tag == tag:
            out.append(child)
        else:
            out += _collect(child, tag)
    return out


def _value_of(node: Node) -> Node | None:
    return next((child for child in node.children if child.tag in VALUE_TAGS), None)


def _value_json(text: str, node: Node | None, closed: bool) -> str:
    if node is None:
        return ""
    if node.tag in (TOOL_ARG_OBJECT, TOOL_ARG_ARRAY):
        return _container_json(text, node, node.tag == TOOL_ARG_OBJECT, closed)
    value = text[node.start:node.end]
    if node.tag == TOOL_ARG_STRING_VALUE:
        return '"' + escape_inner(value) + ('"' if closed else "")
    return value


def _member_json(text: str, node: Node) -> str:
    name = _find(node, TOOL_ARG_NAME)
    if name is None:
        return ""
    key = json.dumps(text[name.start:name.end], ensure_ascii=False)
    return f"{key}:{_value_json(text, _value_of(node), not node.is_partial)}"


def _container_json(text: str, node: Node, is_object: bool, closed: bool) -> str:
    entries = []
    for entry in _collect(node, TOOL_ARG if is_object else TOOL_ARG_ITEM):
        found = (_member_json(text, entry) if is_object
                 else _value_json(text, _value_of(entry), not entry.is_partial))
        if found:
            entries.append(found)
    opening, closing = ("{", "}") if is_object else ("[", "]")
    return opening + ",".join(entries) + (closing if closed else "")


def map_nodes(text: str, nodes: tuple[Node, ...]) -> Mapped:
    """common_chat_peg_minimax_m3_mapper: reasoning, content, and calls whose arguments are the XML elements
    turned into JSON (a partial element or container left open); whitespace-only reasoning is kept; the last
    tagged node read shows as `tail` where it is reasoning or content."""
    out = Mapped()

    def visit(node: Node) -> None:
        if node.tag:
            out.tail = None
        if node.tag == REASONING:
            out.reasoning.append(text[node.start:node.end])
            out.tail = Tail(node, "reasoning", "raw")
        elif node.tag == CONTENT:
            out.content.append(text[node.start:node.end])
            out.tail = Tail(node, "content", "raw")
        elif node.tag == TOOL:
            name = _find(node, TOOL_NAME)
            if name is not None:
                out.calls.append(Call(text[name.start:name.end], _container_json(text, node, True,
                                                                                  not node.is_partial)))
        else:
            for child in node.children:
                visit(child)

    for node in nodes:
        visit(node)
    return out


SYNTAX = Syntax("minimax_m3", "minimax_m3", detect, build, call_starts, mapper=map_nodes)
