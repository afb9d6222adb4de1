"""A stream's fast path: when a parse proves that appending text only lengthens one span still open at the end
of the input (content, reasoning or arguments being scanned), the next read is the last one with that span
lengthened, without running the grammar or the mapper again.

The proof is the parse's frontier (every resumable run that looked at the end of the input): when each of
those ran out of input (NEED_MORE at the end), they form one chain from the root down to one scanner, and
every parser above the scanner passes a child's NEED_MORE on unchanged but for its end. Appending text the
scanner reads on without stopping (`Growth.stops` absent from it, or the scanner run again alone still runs
out of input at the end) then gives the same tree with the chain's ends moved, and the memo tables stay valid
because no memoized result looked at the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from reply.chat import TOOL, TOOL_ARG, Tail, escape_inner, rstrip_space
from reply.json_value import Checkpoint
from reply.messages import Message, ToolCall
from reply.peg import (
    Arena,
    Choice,
    Context,
    Json,
    Parser,
    Repeat,
    Result,
    Rule,
    Sequence,
    Status,
    StringContent,
    Tag,
    Until,
)

PASSING = (Sequence, Choice, Repeat, Rule)
ANYTHING = re.compile(r"[\s\S]")
WRAPPING_TAGS = frozenset({TOOL, TOOL_ARG})


@dataclass(frozen=True)
class Growth:
    """How the last read grows with appended text the `scanner` (at `scanner_start`) reads on through, which
    it does for text holding none of `stops` (None: no character stops it): its `tail` node, starting at
    `start`, runs on to the new end."""

    scanner: Parser
    scanner_start: int
    stops: re.Pattern[str] | None
    start: int
    tail: Tail

    def takes(self, chunk: str) -> bool:
        """Whether the open span reads on through `chunk` without stopping."""
        return self.stops is None or self.stops.search(chunk) is None

    def read_on(self, arena: Arena, ctx: Context) -> Growth | None:
        """The growth of the longer input where the scanner, run again alone over it, still runs out of input
        at its end (what stops it then may differ), else None."""
        ctx.frontier = None
        found = arena.at(self.scanner, ctx, self.scanner_start)
        ctx.eof = False
        if found.status is not Status.NEED_MORE or found.end != len(ctx.text):
            return None
        _, stops = _stops(self.scanner, ctx, self.scanner_start)
        return Growth(self.scanner, self.scanner_start, stops, self.start, self.tail)

    def grown(self, last: Message, text: str, chunk: str) -> Message:
        """The read of `text` (the last read's input with `chunk` appended)."""
        field, how = self.tail.field, self.tail.how
        if field == "content":
            return Message(last.reasoning_content, last.content + chunk, last.tool_calls)
        if field == "reasoning":
            return Message(last.reasoning_content + chunk, last.content, last.tool_calls)
        call = last.tool_calls[-1]
        arguments = rstrip_space(text[self.start:]) if how == "json" else call.arguments + escape_inner(chunk)
        return Message(last.reasoning_content, last.content,
                       (*last.tool_calls[:-1], ToolCall(call.name, arguments, call.id)))


def parsers_by_id(root: Parser) -> dict[int, Parser]:
    """Every parser of a grammar by its id."""
    found: dict[int, Parser] = {}
    todo = [root]
    while todo:
        parser = todo.pop()
        if parser.id in found:
            continue
        found[parser.id] = parser
        todo.extend(getattr(parser, "children", ()))
        child = getattr(parser, "child", None)
        if child is not None:
            todo.append(child)
    return found


@lru_cache(maxsize=256)
def _any_of(chars: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern finding any of `chars` (None when there are none)."""
    return re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]") if chars else None


def _stops(scanner: Parser, ctx: Context, start: int) -> tuple[bool, re.Pattern[str] | None]:
    """Whether the scanner at the end of the input reads on through appended text, and the characters that
    may stop it (None: none do; ANYTHING: any may, so the scanner is run again to see)."""
    if isinstance(scanner, Until):
        return True, _any_of(scanner.trie.firsts)
    if isinstance(scanner, StringContent):
        return True, _any_of(frozenset((scanner.delimiter, "\\")))
    if isinstance(scanner, Json):
        resume = ctx.scans.get((scanner.id, start))
        if isinstance(resume, Checkpoint) and resume.state == "string" and resume.pos == len(ctx.text):
            return True, _any_of(frozenset('"\\'))
        return True, ANYTHING
    return False, None


def growth(parsers: dict[int, Parser], ctx: Context, result: Result, tail: Tail | None) -> Growth | None:
    """How the read of this parse grows with appended text, or None when the parse does not prove it."""
    frontier = ctx.frontier
    size = len(ctx.text)
    if tail is None or not frontier or result.status is not Status.NEED_MORE or result.end != size:
        return None
    if any(found.status is not Status.NEED_MORE or found.end != size for _, _, found in frontier):
        return None
    scanner_id, scanner_start, _ = frontier[0]
    reads_on, stops = _stops(parsers[scanner_id], ctx, scanner_start)
    if not reads_on:
        return None
    node = None
    for parser_id, _, found in frontier[1:]:
        parser = parsers[parser_id]
        if isinstance(parser, Tag):
            if node is None:
                node = found.nodes[0]
            elif parser.tag not in WRAPPING_TAGS:
                return None
        elif not isinstance(parser, PASSING):
            return None
    if node is None or node is not tail.node:
        return None
    return Growth(parsers[scanner_id], scanner_start, stops, node.start, tail)
