"""A stream's fast path: when a parse proves that appending text only lengthens one span still open at the end
of the input (content, reasoning or arguments being scanned), the next read is the last one with that span
lengthened, without running the grammar or the mapper again.

The proof is the parse's frontier (every resumable run that looked at the end of the input): when each of
those ran out of input (NEED_MORE at the end), they form one chain from the root down to one scanner, and
every parser above the scanner passes a child's NEED_MORE on unchanged but for its end. Appending text the
scanner reads on without stopping (`Growth.stops` absent from it, or the scanner run again alone still runs
out of input at the end) then gives the same tree with the chain's ends moved, and the memo tables stay valid
because no memoized result looked at the end. What the stream shows of that read is then what it showed
before with the span lengthened (`shown_grown`), unless a marker may be starting at the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from reply.chat import TOOL, TOOL_ARG, TOOL_ARGS, Tail, escape_inner, rstrip_space
from reply.json_value import Checkpoint
from reply.messages import Message, ToolCall
from reply.peg import (
    Arena,
    Choice,
    Context,
    Json,
    Node,
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
from reply.promises import ArgumentsScan, shown_arguments

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
        if how == "json":
            arguments = rstrip_space(text[self.start:])
        else:
            arguments = call.arguments + (escape_inner(chunk) if how == "escaped" else chunk)
        return Message(last.reasoning_content, last.content,
                       (*last.tool_calls[:-1], ToolCall(call.name, arguments, call.id)))


@lru_cache(maxsize=64)
def marker_starts(markers: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The starts of the markers (each but the whole marker) by their last character, longest first."""
    found: dict[str, set[str]] = {}
    for marker in markers:
        for size in range(1, len(marker)):
            found.setdefault(marker[size - 1], set()).add(marker[:size])
    return {last: tuple(sorted(starts, key=lambda start: (-len(start), start))) for last, starts in found.items()}


def shown_grown(grown: Growth, read: Message, shown: Message, text: str, scans: list[ArgumentsScan],
                markers: tuple[str, ...]) -> Message | None:
    """What a stream shows of `read`, the read of `text` where `grown` proved the last read only grows, when
    `shown` is what it showed of the last read (`reader.hold_back`): the read itself, with the calls shown
    before and the growing arguments shown up to their closable point; None where a marker may be starting
    at the end of `text` or the arguments shown do not only grow (then the stream holds back as usual)."""
    starts = marker_starts(markers).get(text[-1]) if text else None
    if starts is not None and text.endswith(starts):
        return None
    if grown.tail.field != "arguments":
        return read if not read.tool_calls else Message(read.reasoning_content, read.content, shown.tool_calls)
    call, before = read.tool_calls[-1], shown.tool_calls[-1]
    arguments = shown_arguments(call.arguments, scans[len(read.tool_calls) - 1])
    if not arguments.startswith(before.arguments):
        return None
    return Message(read.reasoning_content, read.content,
                   (*shown.tool_calls[:-1], ToolCall(call.name, arguments, call.id)))


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


def _wraps(tag: str, node: Node, text: str) -> bool:
    """Whether the mapper reads a tagged node around the growing one the same however long it grows: a call,
    an argument, or a call's arguments that do not start as a JSON object (only those it takes whole)."""
    if tag in WRAPPING_TAGS:
        return True
    return tag == TOOL_ARGS and node.end > node.start and text[node.start] != "{"


def growth(parsers: dict[int, Parser], ctx: Context, result: Result, tail: Tail | None) -> Growth | None:
    """How the read of this parse grows with appended text, or None when the parse does not prove it. A value
    the mapper normalizes (Python quotes and literals into JSON) grows as appended only where one JSON scanner
    reads all of it: what that scanner reads on is JSON, which normalizing leaves as it is."""
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
            elif not _wraps(parser.tag, found.nodes[0], ctx.text):
                return None
        elif not isinstance(parser, PASSING):
            return None
    if node is None or node is not tail.node:
        return None
    if tail.how == "normalized" and not (isinstance(parsers[scanner_id], Json) and node.start == scanner_start):
        return None
    return Growth(parsers[scanner_id], scanner_start, stops, node.start, tail)
