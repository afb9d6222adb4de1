"""llama.cpp's chat grammar pieces (common/chat-peg-parser.cpp): semantic tags, tool-call builders, and the
mapper that turns a parse's AST into a message."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from reply.peg import SPACE, Builder, Node, Parser
from reply.schema import parameters

REASONING = "reasoning"
CONTENT = "content"
TOOL = "tool"
TOOL_OPEN = "tool-open"
TOOL_CLOSE = "tool-close"
TOOL_ID = "tool-id"
TOOL_NAME = "tool-name"
TOOL_ARGS = "tool-args"
TOOL_ARG = "tool-arg"
TOOL_ARG_OPEN = "tool-arg-open"
TOOL_ARG_CLOSE = "tool-arg-close"
TOOL_ARG_NAME = "tool-arg-name"
TOOL_ARG_VALUE = "tool-arg-value"
TOOL_ARG_STRING_VALUE = "tool-arg-string-value"
MAX_PERMUTE = 6


def trim(text: str) -> str:
    """Strip C-locale whitespace from both ends."""
    start, end = 0, len(text)
    while start < end and text[start] in SPACE:
        start += 1
    while end > start and text[end - 1] in SPACE:
        end -= 1
    return text[start:end]


def rstrip_space(text: str) -> str:
    """Strip C-locale whitespace from the end."""
    end = len(text)
    while end and text[end - 1] in SPACE:
        end -= 1
    return text[:end]


class ChatBuilder(Builder):
    """The chat-specific builder helpers."""

    def content(self, p: Parser) -> Parser:
        """Text that becomes message content."""
        return self.tag(CONTENT, p)

    def reasoning(self, p: Parser) -> Parser:
        """Text that becomes reasoning_content."""
        return self.tag(REASONING, p)

    def tool(self, p: Parser) -> Parser:
        """One whole tool call."""
        return self.tag(TOOL, p)

    def tool_open(self, p: Parser) -> Parser:
        """The opening of a call."""
        return self.atomic(self.tag(TOOL_OPEN, p))

    def tool_close(self, p: Parser) -> Parser:
        """The closing of a call."""
        return self.atomic(self.tag(TOOL_CLOSE, p))

    def tool_id(self, p: Parser) -> Parser:
        """A call id."""
        return self.atomic(self.tag(TOOL_ID, p))

    def tool_name(self, p: Parser) -> Parser:
        """A call's function name."""
        return self.atomic(self.tag(TOOL_NAME, p))

    def tool_args(self, p: Parser) -> Parser:
        """A call's JSON arguments."""
        return self.tag(TOOL_ARGS, p)

    def tool_arg(self, p: Parser) -> Parser:
        """One tagged argument."""
        return self.tag(TOOL_ARG, p)

    def tagged_arguments(self, function: dict[str, Any], name_open: str, string_value: Parser, value_end: str
                         ) -> Parser:
        """A function's tagged arguments in any order, each `{name_open}name">` and its value: `string_value`
        where the schema allows a string, else JSON closed by `value_end`."""
        arg_rules = []
        for param in parameters(function):
            if param.may_be_string:
                value = string_value
            else:
                value = self.seq(self.tool_arg_value(self.json()), self.tool_arg_close(self.lit(value_end)))
            opening = self.tool_arg_open(self.seq(name_open, self.tool_arg_name(self.lit(param.name)), '">'))
            arg_rules.append(self.tool_arg(self.seq(opening, value)))
        return self.zero_or_more(self.seq(self.choice(*arg_rules), self.space())) if arg_rules else self.eps()

    def tool_arg_open(self, p: Parser) -> Parser:
        """A tagged argument's opening."""
        return self.atomic(self.tag(TOOL_ARG_OPEN, p))

    def tool_arg_close(self, p: Parser) -> Parser:
        """A tagged argument's closing."""
        return self.atomic(self.tag(TOOL_ARG_CLOSE, p))

    def tool_arg_name(self, p: Parser) -> Parser:
        """A tagged argument's name."""
        return self.atomic(self.tag(TOOL_ARG_NAME, p))

    def tool_arg_value(self, p: Parser) -> Parser:
        """A tagged argument's JSON (or Python) value."""
        return self.tag(TOOL_ARG_VALUE, p)

    def tool_arg_string_value(self, p: Parser) -> Parser:
        """A tagged argument's raw string value."""
        return self.tag(TOOL_ARG_STRING_VALUE, p)

    def prefix(self, text: str, delimiter: str) -> Parser:
        """The generation prompt up to (not including) the reasoning start tag."""
        if not text:
            return self.eps()
        if not delimiter:
            return self.lit(text)
        cut = text.find(delimiter)
        return self.lit(text if cut < 0 else text[:cut])

    def optspace(self, tag: str) -> Parser:
        """A tag whose leading and trailing whitespace characters are each optional."""
        core = trim(tag)
        if not core:
            return self.eps()
        lead = tag[:tag.index(core[0])]
        tail = tag[len(lead) + len(core):]
        parts: list[Parser] = [self.optional(c) for c in lead]
        parts.append(self.lit(core))
        parts += [self.optional(c) for c in tail]
        return self.seq(*parts)

    def permute(self, prefix: str, parsers: list[Parser]) -> Parser:
        """The parsers in any order (each once); in the given order past COMMON_CHAT_MAX_PERMUTE of them."""
        if not parsers:
            return self.eps()
        if len(parsers) == 1 or len(parsers) > MAX_PERMUTE:
            return self.seq(*parsers)
        rules: dict[int, Parser] = {}

        def remaining(mask: int) -> Parser:
            if mask == 0:
                return self.eps()
            if mask in rules:
                return rules[mask]
            options = [self.seq(p, remaining(mask & ~(1 << i))) for i, p in enumerate(parsers) if mask & (1 << i)]
            rules[mask] = self.rule(f"{prefix}-{mask}", self.choice(*options))
            return rules[mask]

        return remaining((1 << len(parsers)) - 1)

    def standard_json_tools(self, section_start: str, section_end: str, tools: list[dict[str, Any]],
                            parallel: bool, force: bool, layout: JsonLayout) -> Parser:
        """standard_json_tools: JSON calls in any of llama.cpp's layouts (flat keys, name as key, an id field,
        a field order, a [...] list) between the section markers."""
        if not tools:
            return self.eps()
        choices = []
        for tool in tools:
            name = tool["function"]["name"]
            if layout.fun_name_is_key:
                body = self._json_name_is_key(name, layout)
            else:
                body = self._json_flat_keys(name, layout)
            choices.append(self.rule(f"tool-{name}", self.tool(body)))
        calls = self.choice(*choices)
        if parallel:
            calls = self.seq(calls, self.zero_or_more(self.seq(self.space(), ",", self.space(), calls)))
        if layout.array_wrapped:
            calls = self.seq("[", self.space(), calls, self.space(), "]")
        section = self.rule("tool-call", self.seq(section_start, self.space(), calls, self.space(), section_end))
        return section if force else self.optional(section)

    def _json_id(self, key: str, numbers: bool) -> Parser:
        """An id field: a JSON string, or (where llama.cpp allows it) a number."""
        quoted = self.seq('"', self.tool_id(self.string_content('"')), '"')
        value = self.choice(quoted, self.tool_id(self.json_number())) if numbers else quoted
        return self.atomic(self.seq(f'"{key}"', self.space(), ":", self.space(), value))

    def _json_name_is_key(self, name: str, layout: JsonLayout) -> Parser:
        """build_json_tools_function_is_key: {"name": {…arguments…}}."""
        fields: list[Parser] = []
        if layout.id_field:
            fields.append(self.optional(self.seq(self._json_id(layout.id_field, False), self.space(),
                                                 self.optional(self.seq(",", self.space())))))
        if layout.gen_id_field:
            fields.append(self.optional(self.seq(self._json_id(layout.gen_id_field, True), self.space(),
                                                 self.optional(self.seq(",", self.space())))))
        args = self.tool_args(self.json())
        if layout.args_key:
            args = self.seq(f'"{layout.args_key}"', self.space(), ":", self.space(), args)
        fields.append(args)
        if not layout.args_key and len(fields) == 1:
            inner = fields[0]
        else:
            parts: list[Parser] = [self.lit("{"), self.space()]
            for i, part in enumerate(fields):
                parts.append(part)
                if i < len(fields) - 1:
                    parts.append(self.space())
            inner = self.seq(*parts, self.space(), "}")
        return self.seq(self.tool_open(self.lit("{")), self.space(), '"', self.tool_name(self.lit(name)), '"',
                        self.space(), ":", self.space(), inner, self.space(), self.tool_close(self.lit("}")))

    def _json_flat_keys(self, name: str, layout: JsonLayout) -> Parser:
        """build_json_tools_flat_keys: name, arguments and optional ids, in the template's field order."""
        name_key = layout.name_key or "name"
        args_key = layout.args_key or "arguments"
        fields = [
            (self.seq(f'"{name_key}"', self.space(), ":", self.space(),
                      self.atomic(self.seq('"', self.tool_name(self.lit(name)), '"'))), name_key),
            (self.seq(f'"{args_key}"', self.space(), ":", self.space(), self.tool_args(self.json())), args_key),
        ]
        if layout.id_field:
            fields.append((self.optional(self._json_id(layout.id_field, True)), layout.id_field))
        if layout.gen_id_field:
            fields.append((self.optional(self._json_id(layout.gen_id_field, True)), layout.gen_id_field))
        order = list(layout.parameter_order)
        fields.sort(key=lambda pair: order.index(pair[1]) if pair[1] in order else len(order))
        parts: list[Parser] = [self.tool_open(self.lit("{")), self.space()]
        if layout.openai_wrapper:
            parts.append(self.optional(self.seq('"type"', self.space(), ":", self.space(), '"function"', self.space(),
                                                ",", self.space())))
        for i, (part, _) in enumerate(fields):
            parts.append(part)
            if i < len(fields) - 1:
                parts += [self.space(), self.lit(","), self.space()]
        return self.seq(*parts, self.space(), self.tool_close(self.lit("}")))


@dataclass(frozen=True)
class JsonLayout:
    """How a JSON call object is laid out (llama.cpp's tool_format_analysis JSON fields)."""

    name_key: str = "name"
    args_key: str = "arguments"
    array_wrapped: bool = False
    fun_name_is_key: bool = False
    id_field: str = ""
    gen_id_field: str = ""
    parameter_order: tuple[str, ...] = ()
    openai_wrapper: bool = False


def tool_parameters(function: dict[str, Any]) -> dict[str, Any]:
    """A function's parameter schema, defaulting to an empty object schema as llama.cpp does."""
    params = function.get("parameters")
    if params is None or params == {}:
        return {"type": "object", "properties": {}}
    return params


@lru_cache(maxsize=64)
def json_brace_depth(text: str) -> int:
    """Unclosed '{' outside strings."""
    depth, in_string, escaped = 0, False, False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\" and in_string:
            escaped = True
        elif c == '"':
            in_string = not in_string
        elif not in_string:
            depth += (c == "{") - (c == "}")
    return depth


def escape_inner(text: str) -> str:
    """JSON-escape a string without its quotes (nlohmann's dump: non-ASCII kept)."""
    return encode_basestring(text)[1:-1]


def normalize_quotes_to_json(text: str) -> str:
    """Python-style single-quoted strings and True/False/None turned into JSON, as llama.cpp does (text with
    no single quote and no T, F or N has neither, and stays as it is)."""
    if not _PYTHON_MARKS.search(text):
        return text
    out: list[str] = []
    in_single = in_double = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if in_single:
                out.append("'" if nxt == "'" else ('\\"' if nxt == '"' else c + nxt))
                i += 2
                continue
            if in_double:
                out.append(c + nxt)
                i += 2
                continue
            out.append(c)
            i += 1
            continue
        if c == '"':
            if in_single:
                out.append('\\"')
            else:
                in_double = not in_double
                out.append(c)
        elif c == "'":
            if in_double:
                out.append(c)
            else:
                in_single = not in_single
                out.append('"')
        elif not in_single and not in_double and c in "TFN" and (i == 0 or not _word(text[i - 1])):
            j = i
            while j < n and _word(text[j]):
                j += 1
            token = text[i:j]
            for py, js in (("True", "true"), ("False", "false"), ("None", "null")):
                if py[:len(token)] == token:
                    out.append(js[:len(token)])
                    i = j
                    break
            else:
                out.append(c)
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


_PYTHON_MARKS = re.compile("['TFN]")


def _word(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


@dataclass
class Call:
    """A tool call being mapped."""

    name: str = ""
    arguments: str = ""
    id: str = ""


@dataclass(frozen=True)
class Tail:
    """How the last tagged node a mapper read shows in the message: in `field` ("content", "reasoning", or
    "arguments" of the last call), as its text appended ("raw"), as its text JSON-escaped and appended
    ("escaped"), as its text with Python quotes and literals turned into JSON and appended ("normalized"), or
    as its text without trailing whitespace ("json"); so a read where only that node grows is the last read
    with that field grown."""

    node: Node
    field: str
    how: str


@dataclass
class Mapped:
    """What the mapper read from an AST: reasoning, content, calls, and how its last tagged node shows
    (`tail`, None when it shows otherwise)."""

    reasoning: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    tail: Tail | None = None


class Mapper:
    """common_chat_peg_mapper: walks tagged AST nodes in order and builds the message."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out = Mapped()
        self.pending: Call | None = None
        self.current: Call | None = None
        self.arg_count = 0
        self.args_buffer = ""
        self.closing_quote = False

    def run(self, nodes: tuple[Node, ...]) -> Mapped:
        """Map the top-level nodes of a result."""
        for node in nodes:
            self._visit(node)
        if not "".join(self.out.reasoning).strip(" \n\r\t"):
            self.out.reasoning = []
            if self.out.tail is not None and self.out.tail.field == "reasoning":
                self.out.tail = None
        return self.out

    def _visit(self, node: Node) -> None:
        if node.tag:
            self.out.tail = None
            self._map(node)
        for child in node.children:
            self._visit(child)

    def _target_append(self, text: str) -> None:
        if self.current is not None and self.current.name:
            self.current.arguments += text
        else:
            self.args_buffer += text

    def _target_set(self, text: str) -> None:
        if self.current is not None and self.current.name:
            self.current.arguments = text
        else:
            self.args_buffer = text

    def _target(self) -> str:
        if self.current is not None and self.current.name:
            return self.current.arguments
        return self.args_buffer

    def _shown_target(self) -> bool:
        """Whether the arguments being written are the last call's in the message."""
        return self.current is not None and bool(self.current.name) and bool(self.out.calls) \
            and self.out.calls[-1] is self.current

    def _map(self, node: Node) -> None:
        tag = node.tag
        text = self.text[node.start:node.end] if node.start < len(self.text) else ""
        if tag == REASONING:
            self.out.reasoning.append(text)
            self.out.tail = Tail(node, "reasoning", "raw")
        elif tag == CONTENT:
            self.out.content.append(text)
            self.out.tail = Tail(node, "content", "raw")
        elif tag == TOOL_OPEN:
            self.pending = Call()
            self.current = self.pending
            self.arg_count = 0
            self.args_buffer = ""
            self.closing_quote = False
        elif tag == TOOL_ID and self.current is not None:
            value = rstrip_space(text)
            if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
                value = value[1:-1]
            self.current.id = value
        elif tag == TOOL_NAME and self.current is not None:
            self.current.name = rstrip_space(text)
            if self.args_buffer:
                self.current.arguments = self.args_buffer
                self.args_buffer = ""
            elif not self.current.arguments:
                self.current.arguments = "{"
            if self.pending is not None:
                self.out.calls.append(self.pending)
                self.pending = None
                self.current = self.out.calls[-1]
        elif tag == TOOL_ARGS and self.current is not None:
            value = rstrip_space(text)
            if value.startswith("{"):
                self._target_set(value)
                if self._shown_target():
                    self.out.tail = Tail(node, "arguments", "json")
        elif tag == TOOL_ARG_OPEN:
            self.closing_quote = False
        elif tag == TOOL_ARG_NAME and self.current is not None:
            entry = ("," if self.arg_count else "") + encode_basestring(trim_one_lead(text)) + ":"
            self.arg_count += 1
            if not self._target():
                self._target_set("{")
            self._target_append(entry)
        elif tag in (TOOL_ARG_VALUE, TOOL_ARG_STRING_VALUE) and self.current is not None:
            add = ""
            if tag == TOOL_ARG_STRING_VALUE:
                if not text:
                    add = '"'
                    self.closing_quote = True
                else:
                    if not self.closing_quote:
                        add = '"'
                        self.closing_quote = True
                    add += escape_inner(text)
            elif text:
                add = normalize_quotes_to_json(text)
            self._target_append(add)
            if text and self._shown_target():
                how = "escaped" if tag == TOOL_ARG_STRING_VALUE else "normalized"
                self.out.tail = Tail(node, "arguments", how)
        elif tag == TOOL_ARG_CLOSE and self.current is not None:
            if self.closing_quote:
                self._target_append('"')
                self.closing_quote = False
        elif tag == TOOL_CLOSE and self.current is not None:
            if not self.current.name and self.args_buffer:
                self.current.arguments = self.args_buffer
                self.args_buffer = ""
            if self.closing_quote:
                self.current.arguments += '"'
                self.closing_quote = False
            self.current.arguments += "}" * max(0, json_brace_depth(self.current.arguments))
            if self.pending is not None:
                if self.current.name:
                    self.out.calls.append(self.pending)
                self.pending = None


TEXT_TAGS = frozenset({REASONING, CONTENT, TOOL_ID, TOOL_NAME, TOOL_ARGS, TOOL_ARG_NAME, TOOL_ARG_VALUE,
                       TOOL_ARG_STRING_VALUE})


def map_nodes(text: str, nodes: tuple[Node, ...]) -> Mapped:
    """The standard mapper's reading of a parse's top-level nodes over `text` (it reads the text of the nodes
    tagged with one of TEXT_TAGS, and of no other)."""
    return Mapper(text).run(nodes)


def maps_alike_grown(node: Node, end: int, text: str) -> bool:
    """Whether the standard mapper maps `node`, grown over `text` from an earlier version of it that ended
    at `end`, as it mapped that version: it reads no text of the node, or the node is a call's arguments that
    were not empty and do not start as a JSON object (so the mapper drops them either way)."""
    if node.tag not in TEXT_TAGS:
        return True
    return node.tag == TOOL_ARGS and node.start < end and text[node.start] != "{"


def trim_one_lead(text: str) -> str:
    """llama.cpp's trim(): at most one leading whitespace character, all trailing ones."""
    if text and text[0] in SPACE:
        text = text[1:]
    return rstrip_space(text)
