"""Gemma 4 channels and calls (route gemma4), after common/parsers/gemma4.cpp and its AST mapper
(common_chat_peg_gemma4_mapper): `<|channel>thought…<channel|>` reasoning, content, and calls
`<|tool_call>call:x{k:<|"|>v<|"|>,n:4}<tool_call|>` whose arguments (unquoted keys, `<|"|>` strings) the
mapper turns into JSON."""

from __future__ import annotations

from reply.chat import (
    CONTENT,
    REASONING,
    TOOL,
    TOOL_ARGS,
    TOOL_NAME,
    Call,
    ChatBuilder,
    Mapped,
    Tail,
    escape_inner,
)
from reply.peg import Node, Parser
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template

TURN = "<|turn>model\n"
CHANNEL, CHANNEL_END, THOUGHT = "<|channel>", "<channel|>", "<|channel>thought"
CALL_START, CALL_END = "<|tool_call>", "<tool_call|>"
QUOTE = '<|"|>'
STRING, STRING_CONTENT = "gemma4-string", "gemma4-string-content"
BOOL, NULL, NUMBER = "gemma4-bool", "gemma4-null", "gemma4-number"
KEY, KEY_NAME, KEY_VALUE = "gemma4-dict-key", "gemma4-dict-key-name", "gemma4-dict-kv"
DICT, ARRAY, VALUE = "gemma4-dict", "gemma4-array", "gemma4-value"


def detect(template: Template) -> bool:
    """Every template llama.cpp routes to gemma4."""
    return True


def call_starts(template: Template, req: Request) -> list[str]:
    """Where a call starts (nowhere when no tools are offered)."""
    return [CALL_START] if req.use_tools else []


def held_markers(template: Template, req: Request) -> list[str]:
    """None: the grammar's own scans stop before every marker's start, so llama.cpp takes nothing back."""
    return []


def _values(b: ChatBuilder) -> tuple[Parser, Parser]:
    """gemma4-value and gemma4-dict with the rules under them, as tagged nodes the mapper reads by name; only
    gemma4-value is a rule, the one the grammar recurses through."""
    found: dict[str, Parser] = {}

    def make_value() -> Parser:
        value = b.rules[VALUE]
        ws = b.space()
        string = b.tag(STRING, b.seq(QUOTE, b.tag(STRING_CONTENT, b.until(QUOTE)), QUOTE))
        boolean = b.tag(BOOL, b.choice("true", "false"))
        null = b.tag(NULL, b.lit("null"))
        number = b.tag(NUMBER, b.json_number())
        key = b.tag(KEY, b.seq(b.tag(KEY_NAME, b.chars(lambda c: c not in ":}", 1, -1)), ":"))
        member = b.tag(KEY_VALUE, b.seq(key, ws, value))
        members = b.seq(member, b.zero_or_more(b.seq(",", ws, member)))
        found[DICT] = b.tag(DICT, b.seq("{", ws, b.choice("}", b.seq(members, ws, "}"))))
        elements = b.seq(value, b.zero_or_more(b.seq(",", ws, value)))
        array = b.tag(ARRAY, b.seq("[", ws, b.choice("]", b.seq(elements, ws, "]"))))
        return b.tag(VALUE, b.choice(string, found[DICT], array, number, boolean, null))

    return b.rule(VALUE, make_value), found[DICT]


def build(b: ChatBuilder, template: Template, req: Request) -> Parser:
    """common_chat_params_init_gemma4's grammar."""
    start = b.rule("start", b.optional(TURN))
    if req.extract_reasoning:
        block = b.seq(THOUGHT, b.space(), b.reasoning(b.until(CHANNEL_END)), CHANNEL_END)
    else:
        block = b.content(b.seq(THOUGHT, b.space(), b.until(CHANNEL_END), CHANNEL_END))
    thought_rule = b.rule("thought", block)
    empty_channels = b.zero_or_more(b.seq(CHANNEL, b.negate(b.lit("thought"))))
    thought = b.choice(b.seq(b.peek(b.lit(CHANNEL)), empty_channels, thought_rule), b.negate(b.lit(CHANNEL)))
    if not req.use_tools:
        content = b.rule("content", b.content(b.until(CHANNEL, CHANNEL_END)))
        return b.seq(start, b.one_or_more(b.rule("message", b.seq(thought, content))))
    _, dictionary = _values(b)
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        opening = b.tool_open(b.seq(b.tool_name(b.lit(name)), b.peek(b.lit("{"))))
        choices.append(b.tool(b.seq(opening, b.tool_args(dictionary))))
    tool_call = b.repeat(b.seq(f"{CALL_START}call:", b.choice(*choices), CALL_END),
                         1 if req.required else 0, -1 if req.parallel else 1)
    if req.required:
        return b.seq(start, thought, tool_call)
    scan = b.rule("scan-to-toolcall", b.until(CALL_START))
    content = b.rule("content", b.content(b.until(CHANNEL, CHANNEL_END, CALL_START)))
    message = b.rule("message", b.seq(thought, content))
    return b.seq(start, b.zero_or_more(message), scan, tool_call)


def _unwrapped(node: Node) -> Node:
    """The tagged node under the rule nodes above it."""
    while not node.tag and len(node.children) == 1:
        node = node.children[0]
    return node


def to_json(text: str, node: Node) -> str:
    """gemma4_to_json: an argument value node as JSON text (open containers left open while partial)."""
    node = _unwrapped(node)
    if node.end <= node.start or node.start >= len(text):
        return ""
    name, children = node.tag, node.children
    if name in (NUMBER, BOOL, NULL, KEY_NAME):
        return text[node.start:node.end]
    if name == STRING_CONTENT:
        return escape_inner(text[node.start:node.end])
    if name == STRING:
        if not children:
            return '"'
        return '"' + to_json(text, children[0]) + ("" if node.is_partial else '"')
    if name in (ARRAY, DICT):
        opening, closing = ("[", "]") if name == ARRAY else ("{", "}")
        return opening + ",".join(to_json(text, c) for c in children) + ("" if node.is_partial else closing)
    if name == KEY:
        inner = escape_inner(to_json(text, children[0])) if children else ""
        return '"' + inner + ("" if node.is_partial else '":')
    if name == KEY_VALUE:
        return "".join(to_json(text, c) for c in children)
    if name == VALUE:
        return to_json(text, children[0]) if children else ""
    return ""


def _find(node: Node, tag: str) -> Node | None:
    """The first node tagged `tag` in a pre-order walk of `node`."""
    if node.tag == tag:
        return node
    for child in node.children:
        found = _find(child, tag)
        if found is not None:
            return found
    return None


def map_nodes(text: str, nodes: tuple[Node, ...]) -> Mapped:
    """common_chat_peg_gemma4_mapper: reasoning, content and calls, arguments converted by to_json; the last
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
            name, args = _find(node, TOOL_NAME), _find(node, TOOL_ARGS)
            if name is not None and args is not None and not name.is_partial:
                arguments = to_json(text, args.children[0]) if args.children else ""
                out.calls.append(Call(text[name.start:name.end], arguments))
        else:
            for child in node.children:
                visit(child)

    for node in nodes:
        visit(node)
    return out


SYNTAX = Syntax("gemma4", "gemma4", detect, build, call_starts, mapper=map_nodes, held_markers=held_markers)
