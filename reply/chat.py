"""llama.cpp's chat grammar pieces (common/chat-peg-parser.cpp): semantic tags, tool-call builders, and the
mapper that turns a parse's AST into a message."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from reply.peg import SPACE, Builder, Node, Parser

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

    def flat_json_tools(self, section_start: str, section_end: str, tools: list[dict[str, Any]],
                        parallel: bool, force: bool, name_key: str = "name",
                        args_key: str = "arguments") -> Parser:
        """standard_json_tools for the flat {"name": …, "arguments": {…}} layout."""
        if not tools:
            return self.eps()
        choices = []
        for tool in tools:
            name = tool["function"]["name"]
            name_part = self.seq(f'"{name_key}"', self.space(), ":", self.space(),
                                 self.atomic(self.seq('"', self.tool_name(self.lit(name)), '"')))
            args_part = self.seq(f'"{args_key}"', self.space(), ":", self.space(), self.tool_args(self.json()))
            body = self.seq(self.tool_open(self.lit("{")), self.space(), name_part, self.space(), ",",
                            self.space(), args_part, self.space(), self.tool_close(self.lit("}")))
            choices.append(self.rule(f"tool-{name}", self.tool(body)))
        calls = self.choice(*choices)
        if parallel:
            calls = self.seq(calls, self.zero_or_more(self.seq(self.space(), ",", self.space(), calls)))
        section = self.rule("tool-call", self.seq(section_start, self.space(), calls, self.space(), section_end))
        return section if force else self.optional(section)


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
    return json.dumps(text, ensure_ascii=False)[1:-1]


def normalize_quotes_to_json(text: str) -> str:
    """Python-style single-quoted strings and True/False/None turned into JSON, as llama.cpp does."""
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


def _word(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


@dataclass
class Call:
    """A tool call being mapped."""

    name: str = ""
    arguments: str = ""
    id: str = ""


@dataclass
class Mapped:
    """What the mapper read from an AST: reasoning, content, calls."""

    reasoning: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


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
        if self.pending is not None and self.pending.name:
            if self.args_buffer:
                self.pending.arguments = self.args_buffer
            if self.closing_quote and self.pending.arguments:
                self.pending.arguments += '"'
            self.out.calls.append(self.pending)
            self.pending = None
        if not "".join(self.out.reasoning).strip(" \n\r\t"):
            self.out.reasoning = []
        return self.out

    def _visit(self, node: Node) -> None:
        if node.tag:
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

    def _map(self, node: Node) -> None:
        tag = node.tag
        text = self.text[node.start:node.end] if node.start < len(self.text) else ""
        if tag == REASONING:
            self.out.reasoning.append(text)
        elif tag == CONTENT:
            self.out.content.append(text)
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
        elif tag == TOOL_ARG_OPEN:
            self.closing_quote = False
        elif tag == TOOL_ARG_NAME and self.current is not None:
            entry = ("," if self.arg_count else "") + json.dumps(trim_one_lead(text), ensure_ascii=False) + ":"
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


def trim_one_lead(text: str) -> str:
    """llama.cpp's trim(): at most one leading whitespace character, all trailing ones."""
    if text and text[0] in SPACE:
        text = text[1:]
    return rstrip_space(text)
