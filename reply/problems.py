"""The problems beside a reading: what is off about a reply, from its parse and its message."""

from __future__ import annotations

from typing import Protocol

from reply.chat import REASONING, TOOL_CLOSE, TOOL_OPEN, Mapped
from reply.messages import Problem
from reply.peg import Arena, Context, Node, Result, Status
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template
from reply.turn_ends import ends_turn


class Reader(Protocol):
    """What finding problems needs of a reader: its syntax, template, request, generation prompt, where calls
    start and its grammar."""

    syntax: Syntax
    template: Template
    request: Request
    prefix: str
    call_starts: tuple[str, ...]
    arena: Arena


PROBLEMS = tuple(Problem)


def _walk(nodes: tuple[Node, ...]) -> list[Node]:
    out: list[Node] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def find_problems(reader: Reader, ctx: Context, result: Result, mapped: Mapped | None) -> tuple[Problem, ...]:
    """Problems in one reading, in a fixed order."""
    found: set[Problem] = set()
    req = reader.request
    starts = reader.call_starts
    if result.status is Status.FAIL:
        return refusal_problems(reader, ctx.text[len(reader.prefix):])
    opens = closes = 0
    for n in _walk(result.nodes):
        tag = n.tag
        if tag == TOOL_OPEN:
            opens += 1
        elif tag == TOOL_CLOSE:
            closes += not n.is_partial
        elif tag == REASONING and n.is_partial:
            found.add(Problem.UNCLOSED_THINK)
    if result.status is Status.NEED_MORE and (opens > closes or Problem.UNCLOSED_THINK in found
                                              or _ends_with_a_start(ctx.text[len(reader.prefix):], starts)):
        found.add(Problem.CUT_OFF)
    if (result.status is Status.SUCCESS and mapped is not None and mapped.calls
            and not ends_turn(ctx.text[result.end:], reader.template)):
        found.add(Problem.TEXT_AFTER_ACTION)
    if mapped is not None:
        if req.use_tools and not mapped.calls and not found & {Problem.CUT_OFF}:
            found.add(Problem.NO_ACTION)
        if len(mapped.calls) > 1 and not req.parallel:
            found.add(Problem.MULTIPLE_ACTIONS)
        if mapped.calls and "".join(mapped.content).strip():
            found.add(Problem.PROSE_BEFORE_ACTION)
    return tuple(p for p in PROBLEMS if p in found) if found else ()


def refusal_problems(reader: Reader, reply: str, complete: int | None = None) -> tuple[Problem, ...]:
    """Problems of a reply whose parse failed, in a fixed order; `complete` is the length of its longest
    prefix that reads completely with a call closed (-1: none), worked out (`complete_prefix`) when not given."""
    if complete is None:
        complete = complete_prefix(reader, reply)
    found = {Problem.BAD_SYNTAX} | _diagnose(reader, reply, complete)
    return tuple(p for p in PROBLEMS if p in found)


def _ends_with_a_start(reply: str, starts: tuple[str, ...]) -> bool:
    """Whether the reply, trailing whitespace aside, ends with the beginning of a call start."""
    tail = reply.rstrip()
    return any(tail.endswith(s[:k]) for s in starts for k in range(1, len(s) + 1))


def closes_a_call(result: Result) -> bool:
    """Whether a parse read its whole input with a call closed."""
    return result.status is Status.SUCCESS and any(n.tag == TOOL_CLOSE for n in _walk(result.nodes))


def complete_prefix(reader: Reader, reply: str) -> int:
    """The length of the reply's longest prefix that reads completely with a call closed (-1: none): the reply
    re-read one character at a time (resumably, so in linear work)."""
    ctx = Context(reader.prefix, resumable=True)
    complete = -1
    for position, char in enumerate(reply, start=1):
        ctx.text += char
        if closes_a_call(reader.arena.parse(ctx)):
            complete = position
    return complete


def _diagnose(reader: Reader, reply: str, complete: int) -> set[Problem]:
    """Why a reply was refused: text after complete calls (past its longest prefix that reads completely with a
    call closed, `complete` long; none named where only what ends a turn follows them), a call of an unknown
    function, or bad arguments."""
    starts = reader.call_starts
    if complete > 0 and reply[complete:].strip():
        return set() if ends_turn(reply[complete:], reader.template) else {Problem.TEXT_AFTER_ACTION}
    hits = [(reply.find(s), s) for s in starts if s in reply]
    if not hits:
        return set()
    position, start = min(hits)
    after = reply[position + len(start):]
    names = [tool["function"]["name"] for tool in reader.request.tools]
    if not any(name in after[:len(name) + 64] for name in names):
        return {Problem.UNKNOWN_ACTION}
    return {Problem.BAD_ARGS}
