"""The problems beside a reading: what is off about a reply, from its parse and its message."""

from __future__ import annotations

from typing import Protocol

from reply.chat import REASONING, TOOL_CLOSE, TOOL_OPEN, Mapped
from reply.messages import Problem
from reply.peg import Context, Node, Result, Status
from reply.request import Request
from reply.syntaxes import Syntax
from reply.template import Template


class Reader(Protocol):
    """What finding problems needs of a reader: its syntax, template, request and generation prompt."""

    syntax: Syntax
    template: Template
    request: Request
    prefix: str


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
    reply = ctx.text[len(reader.prefix):]
    starts = [s for s in reader.syntax.call_starts(reader.template, req) if s]
    if result.status is Status.FAIL:
        found.add(Problem.BAD_SYNTAX)
        found |= _diagnose(reader, reply, starts)
    else:
        nodes = _walk(result.nodes)
        if any(n.tag == REASONING and n.is_partial for n in nodes):
            found.add(Problem.UNCLOSED_THINK)
        opens = sum(1 for n in nodes if n.tag == TOOL_OPEN)
        closes = sum(1 for n in nodes if n.tag == TOOL_CLOSE and not n.is_partial)
        if result.status is Status.NEED_MORE and (opens > closes or Problem.UNCLOSED_THINK in found
                                                  or any(reply.rstrip().endswith(s[:k]) for s in starts
                                                         for k in range(1, len(s) + 1))):
            found.add(Problem.CUT_OFF)
        if result.status is Status.SUCCESS and result.end < len(ctx.text) and ctx.text[result.end:].strip():
            found.add(Problem.TEXT_AFTER_ACTION)
        if mapped is not None:
            if req.use_tools and not mapped.calls and not found & {Problem.CUT_OFF}:
                found.add(Problem.NO_ACTION)
            if len(mapped.calls) > 1 and not req.parallel:
                found.add(Problem.MULTIPLE_ACTIONS)
            if mapped.calls and "".join(mapped.content).strip():
                found.add(Problem.PROSE_BEFORE_ACTION)
    return tuple(p for p in Problem if p in found)


def _diagnose(reader: Reader, reply: str, starts: list[str]) -> set[Problem]:
    """Why a reply was refused: text after complete calls, a call of an unknown function, or bad arguments.
    The reply is re-read one character at a time (resumably, so in linear work) to find the longest prefix
    that reads completely with calls."""
    ctx = Context(reader.prefix, resumable=True)
    complete = -1
    for position, char in enumerate(reply, start=1):
        ctx.text += char
        result = reader.arena.parse(ctx)
        if result.status is Status.SUCCESS and any(n.tag == TOOL_CLOSE for n in _walk(result.nodes)):
            complete = position
    if complete > 0 and reply[complete:].strip():
        return {Problem.TEXT_AFTER_ACTION}
    hits = [(reply.find(s), s) for s in starts if s in reply]
    if not hits:
        return set()
    position, start = min(hits)
    after = reply[position + len(start):]
    names = [tool["function"]["name"] for tool in reader.request.tools]
    if not any(name in after[:len(name) + 64] for name in names):
        return {Problem.UNKNOWN_ACTION}
    return {Problem.BAD_ARGS}
