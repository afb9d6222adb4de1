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

Where the frontier instead waits on one run still arriving (a literal such as a call marker or a tool name, a
key's characters, a scan under a custom mapper) while every other run that looked at the end follows from it
or from a scan stopped before a delimiter still arriving, the parse `stall`s: appended text that run takes
gives the same tree with its ends moved, read again by the mapper without running the grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from reply.chat import TOOL, TOOL_ARG, TOOL_ARGS, Tail, escape_inner, rstrip_space
from reply.json_value import Checkpoint
from reply.messages import Message, ToolCall
from reply.peg import (
    Arena,
    Atomic,
    Chars,
    Choice,
    Context,
    Json,
    Literal,
    Negate,
    Node,
    Parser,
    Peek,
    Repeat,
    Result,
    Rule,
    Sequence,
    Space,
    Status,
    StringContent,
    Tag,
    Until,
)
from reply.promises import ArgumentsScan, shown_arguments

PASSING = (Sequence, Choice, Repeat, Rule)
STALLING = (*PASSING, Tag, Atomic)
FOLLOWING = (*STALLING, Peek, Negate)
ANYTHING = re.compile(r"[\s\S]")
WRAPPING_TAGS = frozenset({TOOL, TOOL_ARG})
SPACE = frozenset(" \t\n\v\f\r")


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
                starts_by_last: dict[str, tuple[str, ...]]) -> Message | None:
    """What a stream shows of `read`, the read of `text` where `grown` proved the last read only grows, when
    `shown` is what it showed of the last read (`reader.hold_back`): the read itself, with the calls shown
    before and the growing arguments shown up to their closable point; None where a marker may be starting
    at the end of `text` (`starts_by_last`: the markers' `marker_starts`) or the arguments shown do not only
    grow (then the stream holds back as usual)."""
    starts = starts_by_last.get(text[-1]) if text else None
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


@dataclass(frozen=True)
class Stall:
    """How a parse (`result` of the input up to `end`, with its `frontier`) reads on while the input ends
    inside one run the parse waits on, at `start`: a literal still arriving (`literal`), a scan that reads
    on through text holding none of `stops`, or a run of characters it `accepts` (at most `most`, -1: no
    bound). Each append it takes gives the same tree, its nodes that ended at the end of the input ending at
    the new end (`moved`), as long as each scan that stopped at a delimiter the input ends inside (`waits`:
    where, and the scan's delimiters) still stops there."""

    start: int
    literal: str | None
    stops: re.Pattern[str] | None
    accepts: Callable[[str], bool] | None
    most: int
    waits: tuple[tuple[int, tuple[str, ...]], ...]
    result: Result
    frontier: tuple[tuple[int, int, Result], ...]
    end: int

    def moved(self, size: int) -> tuple[Result, dict[int, Node]]:
        """The parse of the input grown to `size`, and its new nodes by the ids of the old ones."""
        made: dict[int, Node] = {}
        result, every = self.result, self.accepts is not None
        return Result(result.status, result.start, size, moved(result.nodes, self.end, size, made, every)), made

    def moved_frontier(self, size: int, made: dict[int, Node]) -> list[tuple[int, int, Result]]:
        """The frontier of the parse grown to `size`, its nodes those `moved` made."""
        every = self.accepts is not None
        return [(pid, start, found if found.end != self.end else
                 Result(found.status, found.start, size, moved(found.nodes, self.end, size, made, every)))
                for pid, start, found in self.frontier]

    @property
    def scans(self) -> bool:
        """Whether the run the input ends inside is a scan (not a literal or a run of characters, each of which
        stays in the parse's frontier, unlike any a `growth` reads on through)."""
        return self.literal is None and self.accepts is None

    def holds(self, text: str, chunk: str) -> bool:
        """Whether `text`, grown by `chunk`, still ends inside the run and each waiting scan still stops where
        it did."""
        if self.literal is not None:
            if len(text) - self.start >= len(self.literal) or not self.literal.startswith(text[self.start:]):
                return False
        elif self.accepts is not None:
            if (self.most != -1 and len(text) - self.start > self.most) or not all(map(self.accepts, chunk)):
                return False
        elif self.stops is not None and self.stops.search(chunk) is not None:
            return False
        return all(any(word.startswith(text[at:]) or text.startswith(word, at) for word in words)
                   for at, words in self.waits)


def stall(parsers: dict[int, Parser], ctx: Context, result: Result) -> Stall | None:
    """The stall of this parse, or None when the parse does not prove one. Every run that looked at the end
    of the input is one of: the one run the input ends inside (a literal still arriving, a scan that reads
    on, or a run of characters, then with a literal waiting at the end); a parser that passes a child's
    NEED_MORE on unchanged but for its end (or drops its nodes); a scan that stopped at a delimiter the input
    ends inside; or a parser whose result follows from its children's alone (unlike a repeat that reached the
    end)."""
    frontier = ctx.frontier
    size = len(ctx.text)
    if not frontier or result.status is not Status.NEED_MORE or result.end != size:
        return None
    arriving: tuple[int, str | None, re.Pattern[str] | None, Callable[[str], bool] | None, int] | None = None
    waiting: list[str] = []
    waits = []
    for parser_id, start, found in frontier:
        parser = parsers[parser_id]
        if found.status is Status.NEED_MORE:
            if found.end != size:
                return None
            if isinstance(parser, STALLING):
                continue
            if isinstance(parser, Literal) and start == size:
                waiting.append(parser.literal)
                continue
            if arriving is not None:
                return None
            if isinstance(parser, Literal):
                arriving = (start, parser.literal, None, None, -1)
                continue
            reads_on, stops = _stops(parser, ctx, start)
            if not reads_on or stops is ANYTHING:
                return None
            arriving = (start, None, stops, None, -1)
        elif isinstance(parser, (Chars, Space)) and found.status is Status.SUCCESS and found.end == size:
            if arriving is not None:
                return None
            if isinstance(parser, Chars):
                arriving = (start, None, None, parser.accept, parser.max_count)
            else:
                arriving = (start, None, None, SPACE.__contains__, -1)
        elif isinstance(parser, Until) and found.status is Status.SUCCESS and found.end < size:
            waits.append((found.end, tuple(parser.trie.words)))
        elif not isinstance(parser, FOLLOWING) or (isinstance(parser, Repeat) and found.end == size):
            return None
    if arriving is None and len(waiting) == 1:
        arriving = (size, waiting[0], None, None, -1)
    elif arriving is None or bool(waiting) != (arriving[3] is not None):
        return None
    return Stall(*arriving, tuple(waits), result, tuple(frontier), size)


def moved(nodes: tuple[Node, ...], end: int, new_end: int, made: dict[int, Node], every: bool) -> tuple[Node, ...]:
    """`nodes` with each partial one that ends at `end` (`every` one, when a finished run of characters grows),
    and its children that do, ending at `new_end` instead, one new node per old one (`made`, by the old one's
    id, so the frontier's nodes stay those of the tree). When a run of characters grows, a partial node that
    is empty at `end` waits after the run, so it starts at `new_end` too."""
    if not nodes or nodes[-1].end != end or not (every or nodes[-1].is_partial):
        return nodes
    last = nodes[-1]
    grown = made.get(id(last))
    if grown is None:
        start = new_end if every and last.is_partial and last.start == end else last.start
        grown = made[id(last)] = Node(last.rule, last.tag, start, new_end,
                                      moved(last.children, end, new_end, made, every), last.is_partial)
    return (*nodes[:-1], grown)
