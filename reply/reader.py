"""Readers: one per session, holding the grammar its template's syntax builds; whole parses and streams."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import nullcontext
from functools import cached_property
from typing import Any

from chatparity.model import PINNED_NOW, common_prefix_length
from reply.analysis import trim_whitespace
from reply.chat import CONTENT, REASONING, ChatBuilder, Mapped, map_nodes, maps_alike_grown
from reply.deltas import Delta, delta_between
from reply.fingerprint import fingerprint
from reply.growth import (
    Growth,
    Stall,
    growth,
    marker_starts,
    parsers_by_id,
    shown_grown,
    stall,
)
from reply.messages import Message, Problem, Rejected, RenderFailed, ToolCall, Unsupported
from reply.peg import Arena, Context, Node, Parser, Result, Status
from reply.problems import closes_a_call, find_problems, refusal_problems
from reply.promises import ArgumentsScan, closed_arguments, is_object, shown_arguments
from reply.rendering import generation_prompt
from reply.request import Request
from reply.syntaxes import Syntax, select
from reply.template import Template, template_of

REJECTION = "The model produced output that does not match the expected peg-native format"
TOO_DEEP = "The reply nests deeper than the parser's grammar can recurse"
PLACEHOLDER_MESSAGES = [{"role": "user", "content": "Hello"}]
DIAGNOSED_KEPT = 256
FINISHED_KEPT = 1024
RECORDS_KEPT = 256
RECORDS_PARSED = 4
VIEWS_UP_TO = 1024
NO_GUARD = nullcontext()


class _DeepRecursion:
    """Deep recursion allowed inside the block; a RecursionError there becomes Rejected."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.old = limit

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        if self.old < self.limit:
            sys.setrecursionlimit(self.limit)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        if self.old < self.limit:
            sys.setrecursionlimit(self.old)
        if kind is not None and issubclass(kind, RecursionError):
            raise Rejected(TOO_DEEP, lambda: (Problem.BAD_SYNTAX,)) from None


def _deep_recursion(limit: int = 20000) -> _DeepRecursion:
    """A grammar's recursive rules (JSON reads iteratively) may nest deep: allow deep recursion for one parse,
    and refuse a reply that nests deeper still (Rejected, never RecursionError)."""
    return _DeepRecursion(limit)


def _system_merged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """llama.cpp's fallback for templates without a system role: the system text joins the next message."""
    out = [{**m, "role": "system" if m.get("role") == "developer" else m.get("role")} for m in messages]
    if len(out) > 1 and out[0]["role"] == "system":
        out[1] = {**out[1], "content": f"{out[0].get('content', '')}\n{out[1].get('content', '')}"}
        return out[1:]
    return out[1:] if out and out[0]["role"] == "system" else out


def _request(session: Any, template: Template) -> Request:
    kwargs = dict(getattr(session, "chat_template_kwargs", None) or getattr(session, "kwargs", None) or {})
    thinking = bool(getattr(session, "enable_thinking", True))
    if isinstance(kwargs.get("enable_thinking"), bool):
        thinking = kwargs["enable_thinking"]
    tools = list(getattr(session, "tools", None) or [])
    messages = [dict(m) for m in getattr(session, "messages", None) or PLACEHOLDER_MESSAGES]
    extra = {**kwargs, "enable_thinking": thinking}
    now = getattr(session, "now", PINNED_NOW) or PINNED_NOW
    errors = []
    for attempt in (messages, _system_merged(messages), PLACEHOLDER_MESSAGES):
        try:
            gp = generation_prompt(template.source, bos=template.bos, eos=template.eos, messages=attempt,
                                   tools=tools, enable_thinking=thinking, extra=extra, now=now)
            break
        except Exception as error:  # noqa: BLE001 - a template may raise anything; RenderFailed reports it
            errors.append(str(error))
    else:
        raise RenderFailed(f"the template does not render with jinja2: {errors[0]}")
    return Request(
        tools=tools,
        tool_choice=str(getattr(session, "tool_choice", "auto") or "auto"),
        parallel=bool(getattr(session, "parallel_tool_calls", False)),
        extract_reasoning=(getattr(session, "reasoning_format", "deepseek") or "deepseek") != "none",
        enable_thinking=thinking,
        generation_prompt=gp,
    )


def reader_inputs(session: Any) -> tuple[Syntax, Template, Request]:
    """What a reader of a session is built from: its template's syntax, the template and the request;
    Unsupported when no syntax reads the template."""
    bos, eos = getattr(session, "bos", "") or "", getattr(session, "eos", "") or ""
    template = template_of(session.template_source, bos, eos)
    syntax = select(template)
    if syntax is None:
        raise Unsupported(f"no reply syntax for this template (llama.cpp route: {template.route})")
    return syntax, template, _request(session, template)


def open_reader(session: Any) -> Reader:
    """A reader for a session (template source, bos, eos, tools, tool_choice, parallel_tool_calls,
    enable_thinking, chat_template_kwargs or kwargs, reasoning_format, messages); Unsupported when no syntax
    reads its template."""
    return Reader(*reader_inputs(session))


def inputs_key(syntax: Syntax, template: Template, request: Request) -> tuple[object, ...] | None:
    """A key equal for equal reader inputs (None where the tools do not write as JSON): readers built from
    equal inputs read every reply alike."""
    try:
        tools = json.dumps(request.tools, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return (syntax.name, template, tools, request.tool_choice, request.parallel, request.extract_reasoning,
            request.enable_thinking, request.generation_prompt)


class Reader:
    """Reads replies of one session. Where `fast` (the default), every stream of a reply reads one shared
    record of it (`Record`: the reply read once, one character at a time, lengthening reads the last parse
    proves only grow) and the last finished read is kept; turned off, every feed is parsed and each stream
    replays on its own: the same reads, more slowly."""

    def __init__(self, syntax: Syntax, template: Template, request: Request) -> None:
        self.syntax = syntax
        self.template = template
        self.request = request
        builder = ChatBuilder()
        self.arena = Arena(syntax.build(builder, template, request))
        self.prefix = request.generation_prompt
        self.call_starts = tuple(start for start in syntax.call_starts(template, request) if start)
        if syntax.held_markers is not None:
            found = [m for m in syntax.held_markers(template, request) if len(m) > 1]
        else:
            tags = [trim_whitespace(template.reasoning.start), trim_whitespace(template.reasoning.end)]
            tags += [tag for tag in ("<think>", "</think>") if tag in template.source]
            found = [m for m in [*tags, *self.call_starts] if len(m) > 1]
        self.markers = tuple(sorted(set(found), key=lambda m: (-len(m), m)))
        self.standard_mapper = syntax.mapper is map_nodes
        self.longest_marker = max(map(len, self.markers), default=0)
        self.marker_starts = marker_starts(self.markers)
        self.fast = True
        self.shared: Record | None = None
        self.records: list[Record] = []
        self.finished_reads: dict[str, Message | Rejected] = {}
        self.diagnosed: dict[str, tuple[Problem, ...]] = {}

    def parse(self, text: str, partial: bool = False) -> Message:
        """The message in a reply; Rejected when llama.cpp would throw. A partial (cut off) reply reads as a
        stream would show it at that point (a marker still arriving at its end, and arguments past their last
        closable point, held back); a finished one keeps what its stream showed (`keep_promises`)."""
        if partial or not self.fast:
            return self.parsed(text, partial)
        found = self.finished_reads.get(text)
        if found is None:
            try:
                found = self.parsed(text, partial)
            except Rejected as refusal:
                found = refusal.with_traceback(None)
            if len(self.finished_reads) >= FINISHED_KEPT:
                del self.finished_reads[next(iter(self.finished_reads))]
            self.finished_reads[text] = found
        if isinstance(found, Rejected):
            raise found.with_traceback(None)
        return found

    def parsed(self, text: str, partial: bool) -> Message:
        """`parse`, worked out."""
        ctx = Context(self.prefix + text)
        with _deep_recursion():
            result = self.arena.parse(ctx)
            message = self.read(ctx, result, partial)
        if not partial:
            return self.finished(message, ctx, result)
        held = hold_back(message, ctx.text, self.markers, [], lambda: result.nodes)
        if held.empty or self.opens_call(held.content) or self.hides_calls(held, lambda: text):
            held = self.replayed(text)
        return Message(held.reasoning_content, held.content, held.tool_calls, message.problems)

    def hides_calls(self, read: Message, reply: Callable[[], str]) -> bool:
        """Whether a partial read may hide calls a character-by-character stream showed: it has none, reasoning
        is left in the content (reasoning_format none), and the reply (`reply()`) opens a call that the
        content does not hold as it is."""
        if self.request.extract_reasoning or read.tool_calls:
            return False
        text = reply()
        return read.content != text and self.opens_call(text)

    def opens_call(self, content: str, since: int = 0) -> bool:
        """Whether `content` holds a call opening, read as text, that ends past its first `since` characters
        (what the grammar reads as text once a call cannot be read may have shown as a call before)."""
        if len(content) <= since:
            return False
        for start in self.call_starts:
            if content.find(start, max(0, since - len(start) + 1)) >= 0:
                return True
        return False

    def record_of(self, text: str, record: Record | None = None) -> Record:
        """A record of the reply `text`, read through it: `record` brought up to it when given, else the
        reader's shared record where `fast` (forked where `text` only shares a start with the replies read
        before), else a fresh one."""
        if record is not None:
            return record.extended(text, 0)
        if not self.fast:
            return Record(self).extended(text, 0)
        self.shared = self.current_record().extended(text, 0)
        return self.shared

    def current_record(self) -> Record:
        """The record every stream of this `fast` reader starts from: the shared one, a new kept one when none."""
        if self.shared is None:
            self.shared = self.kept(Record(self))
        return self.shared

    def forget(self) -> None:
        """Drop every kept read (records, finished reads, diagnoses): the next read of any reply parses it."""
        self.shared = None
        self.records, self.finished_reads, self.diagnosed = [], {}, {}

    def recorded(self, start: str) -> Record | None:
        """The most recent kept record that read a reply starting with `start` (None when none did)."""
        offset = len(self.prefix)
        for record in reversed(self.records):
            if record.reading.ctx.text.startswith(start, offset):
                return record
        return None

    def kept(self, record: Record) -> Record:
        """`record`, kept among the reader's recent records (`recorded`) where `fast`; the records older than
        the newest RECORDS_PARSED keep what they read but drop their parse (`Record.rest`)."""
        if self.fast:
            if len(self.records) >= RECORDS_KEPT:
                del self.records[0]
            self.records.append(record)
            if len(self.records) > RECORDS_PARSED:
                self.records[-RECORDS_PARSED - 1].rest()
        return record

    def equivalence(self) -> tuple[object, ...]:
        """What every read of this reader follows from: readers alike in it read every reply alike."""
        return (self.syntax.name, fingerprint(self.arena.root), self.prefix, self.call_starts, self.markers,
                self.request.use_tools, self.request.parallel,
                tuple(tool["function"]["name"] for tool in self.request.tools))

    def replayed(self, text: str) -> Message:
        """What a character-by-character stream of the reply `text` shows last (`Record.shown_at`)."""
        return self.record_of(text).shown_at(len(text))

    def finished(self, final: Message, ctx: Context, result: Result, record: Record | None = None) -> Message:
        """The finished message that keeps a stream's promises (`keep_promises`): where the finished read is
        empty, checked against what a character-by-character stream showed last (read from `record` when
        given, else from `record_of`'s); where it leaves a call opening unread or reads one as content,
        against what such a stream showed from there on (from where the read stopped, or from the first
        opening within its content); where a call's arguments are not a JSON object, with them closed; where
        reasoning is left in the content (reasoning_format none) and a read without calls is not the reply itself,
        against what a stream showed last (its partial reads may have shown the reply as it is)."""
        since = 0
        if final.empty:
            pass
        elif result.end < len(ctx.text) and any(start in ctx.text[result.end:] for start in self.call_starts):
            since = max(result.end - len(self.prefix), 0)
        elif any(start in final.content for start in self.call_starts):
            opening = self.opening_in_content(ctx.text, result.nodes)
            since = 0 if opening is None else max(opening - len(self.prefix), 0)
        elif any(not is_object(call.arguments) for call in final.tool_calls):
            return keep_promises(final, final)
        elif self.request.extract_reasoning or final.tool_calls or final.content == ctx.text[len(self.prefix):]:
            return final
        text = ctx.text[len(self.prefix):]
        recorded = self.record_of(text, record)
        shown = recorded.shown_from(since, len(text)) if since else recorded.shown_at(len(text))
        return keep_promises(final, shown)

    def opening_in_content(self, text: str, nodes: tuple[Node, ...]) -> int | None:
        """Where in `text` the first call opening that a read (`nodes`) took as content starts (None when no
        opening lies whole within one of its content spans)."""
        found = None
        todo = list(nodes)
        while todo:
            node = todo.pop()
            if node.tag == CONTENT:
                for start in self.call_starts:
                    at = text.find(start, node.start, node.end)
                    if at >= 0 and (found is None or at < found):
                        found = at
            todo.extend(node.children)
        return found

    def stream(self) -> Stream:
        """An incremental reader fed chunk by chunk."""
        return Stream(self)

    @cached_property
    def parsers(self) -> dict[int, Parser]:
        """The grammar's parsers by id (what a stream's fast path reads a parse's frontier with)."""
        return parsers_by_id(self.arena.root)

    def refusal(self, text: str) -> Rejected:
        """llama.cpp's refusal of the input `text` (generation prompt and reply), its problems diagnosed on
        first access."""
        return Rejected(REJECTION, lambda: self.failure_problems(text))

    def failure_problems(self, text: str) -> tuple[Problem, ...]:
        """The problems of the input `text` (generation prompt and reply), whose parse failed, worked out once
        per text: diagnosing re-reads the reply (unless a kept record read it: `Record.complete_prefix`), and a
        refused reply is refused again by every stream of it."""
        found = self.diagnosed.get(text)
        if found is None:
            if len(self.diagnosed) >= DIAGNOSED_KEPT:
                self.diagnosed.clear()
            reply = text[len(self.prefix):]
            record = self.recorded(reply) if self.fast else None
            complete = record.complete_prefix(len(reply)) if record is not None else None
            found = self.diagnosed[text] = refusal_problems(self, reply, complete)
        return found

    def read(self, ctx: Context, result: Result, partial: bool, diagnose: bool = True) -> Message:
        """common_chat_peg_parse's reading of a parse result, with its problems when `diagnose`."""
        return self.mapped_read(ctx, result, partial, diagnose)[0]

    def mapped_read(self, ctx: Context, result: Result, partial: bool,
                    diagnose: bool = True) -> tuple[Message, Mapped | None]:
        """`read`, and what the mapper read (None when the parse failed)."""
        if result.status is Status.FAIL:
            if partial and result.end > 0:
                return Message(problems=self.failure_problems(ctx.text) if diagnose else ()), None
            raise self.refusal(ctx.text)
        mapped = self.syntax.mapper(ctx.text, result.nodes)
        message = Message(
            reasoning_content="".join(mapped.reasoning),
            content="".join(mapped.content),
            tool_calls=tuple(ToolCall(c.name, c.arguments, c.id) for c in mapped.calls),
            problems=find_problems(self, ctx, result, mapped) if diagnose else (),
        )
        return message, mapped


def arriving_marker(text: str, markers: tuple[str, ...]) -> int:
    """How many of the text's last characters are the start of a marker still arriving (0 when none)."""
    if not text:
        return 0
    return next((len(start) for start in marker_starts(markers).get(text[-1], ()) if text.endswith(start)), 0)


def _read_past(nodes: tuple[Node, ...], boundary: int) -> tuple[int, int]:
    """How many characters of reasoning and of content a read's `nodes` take from the text at or past
    `boundary`."""
    reasoning = content = 0
    todo = list(nodes)
    while todo:
        node = todo.pop()
        if node.end <= boundary:
            continue
        if node.tag == REASONING:
            reasoning += node.end - max(node.start, boundary)
        elif node.tag == CONTENT:
            content += node.end - max(node.start, boundary)
        todo.extend(node.children)
    return reasoning, content


def hold_back(message: Message, text: str, markers: tuple[str, ...], scans: list[ArgumentsScan],
              nodes: Callable[[], tuple[Node, ...]]) -> Message:
    """A partial read without the start of a marker still arriving at the end of the input `text`, and each
    call's arguments only up to their last closable point (`scans`, one per call, resume earlier scans). What
    of reasoning and content lies inside the marker start is known from the read's `nodes` (asked for only
    when a marker start arrives)."""
    scans.extend(ArgumentsScan() for _ in range(len(message.tool_calls) - len(scans)))
    calls = tuple(ToolCall(call.name, shown_arguments(call.arguments, scan), call.id)
                  for call, scan in zip(message.tool_calls, scans))
    reasoning, content = message.reasoning_content, message.content
    arriving = arriving_marker(text, markers) if reasoning or content else 0
    if arriving:
        in_reasoning, in_content = _read_past(nodes(), len(text) - arriving)
        reasoning = reasoning[:len(reasoning) - min(in_reasoning, len(reasoning))]
        content = content[:len(content) - min(in_content, len(content))]
    return Message(reasoning_content=reasoning, content=content, tool_calls=calls)


def keep_promises(final: Message, shown: Message) -> Message:
    """The finished message that keeps the stream's promises: the finished read when it adds to what was shown
    and its calls' arguments are JSON objects; else the one of the two that adds to the other (what was shown
    when the read drops a call), each call's arguments closed into a JSON object (bad_args reported where one
    was not)."""
    grows = extends(shown, final)
    if grows and all(is_object(call.arguments) for call in final.tool_calls):
        return final
    base = final if grows else shown
    calls = tuple(ToolCall(call.name, closed_arguments(call.arguments), call.id) for call in base.tool_calls)
    closed = any(not is_object(call.arguments) for call in base.tool_calls)
    problems = set(final.problems) | ({Problem.BAD_ARGS} if closed else set())
    if calls:
        problems.discard(Problem.NO_ACTION)
    return Message(base.reasoning_content, base.content, calls, tuple(p for p in Problem if p in problems))


def extends(before: Message, after: Message) -> bool:
    """Whether `after` only adds to `before`: text grows, calls never vanish, names and arguments grow."""
    if before is after:
        return True
    if not (after.content.startswith(before.content)
            and after.reasoning_content.startswith(before.reasoning_content)
            and len(after.tool_calls) >= len(before.tool_calls)):
        return False
    return all(new.name.startswith(old.name) and new.arguments.startswith(old.arguments)
               for old, new in zip(before.tool_calls, after.tool_calls))


Mark = tuple[int, int, tuple[tuple[int, int, str], ...]]


def _mark(shown: Message) -> Mark:
    """The lengths of what a message shows (reasoning, content, each call's name and arguments) and its ids."""
    return (len(shown.reasoning_content), len(shown.content),
            tuple((len(call.name), len(call.arguments), call.id) for call in shown.tool_calls))


def _truncated(later: Message, mark: Mark) -> Message:
    """The message a replay showed at `mark`, from a `later` one that extends it."""
    reasoning, content, calls = mark
    return Message(later.reasoning_content[:reasoning], later.content[:content],
                   tuple(ToolCall(call.name[:name], call.arguments[:arguments], call_id)
                         for call, (name, arguments, call_id) in zip(later.tool_calls, calls)))


class Reading:
    """A text read as it grows: each append parses on from where the last parse stopped or, where that parse
    proved the appended text only lengthens a span open at the end (`reply.growth`), lengthens the last read;
    once a parse never looked at the end of the text (`settled`), appends change nothing of the read (unless
    the reader is not `fast`: the same reads, each parsed)."""

    def __init__(self, reader: Reader, text: str) -> None:
        self.reader = reader
        self.ctx = Context(text, resumable=True)
        self.result: Result | None = None
        self.last = Message()
        self.mapped: Mapped | None = None
        self.growth: Growth | None = None
        self.stall: Stall | None = None
        self.settled: Message | Rejected | None = None

    def grow(self, chunk: str) -> Message | Rejected:
        """The partial read (no problems) after appending `chunk`, or the refusal of the text so far (returned);
        Rejected (raised) when the text nests too deep to parse."""
        self.ctx.text += chunk
        if self.settled is not None:
            return self.settled
        found = self.growth
        if found is not None and not found.takes(chunk):
            found = self.growth = found.read_on(self.reader.arena, self.ctx)
        if found is not None:
            self.result = None
            self.last = found.grown(self.last, self.ctx.text, chunk)
            return self.last
        if self.stall is not None and self.result is not None and self.stall.holds(self.ctx.text, chunk):
            return self.stalled(self.stall)
        return self.read()

    def stalled(self, stall: Stall) -> Message:
        """The read of the text grown where the last parse stalls (`growth.Stall`): that parse with its nodes
        ending at the new end, mapped again unless the mapper maps each node that moved alike
        (`maps_alike_grown`), and lengthened from then on where it only grows (only a stall inside a scan can
        end in a growth)."""
        ctx, reader = self.ctx, self.reader
        size = len(ctx.text)
        self.result, made = stall.moved(size)
        if not made:
            return self.last
        if not (reader.standard_mapper and self.mapped is not None
                and all(maps_alike_grown(node, stall.end, ctx.text) for node in made.values())):
            self.last, self.mapped = reader.mapped_read(ctx, self.result, partial=True, diagnose=False)
        mapped = self.mapped
        if mapped is not None and mapped.tail is not None and stall.scans:
            ctx.frontier = stall.moved_frontier(size, made)
            self.growth = growth(reader.parsers, ctx, self.result, mapped.tail)
        return self.last

    def read(self) -> Message | Rejected:
        """The partial read of the text so far, parsed on, or its refusal (returned)."""
        ctx, reader = self.ctx, self.reader
        self.growth = self.stall = None
        ctx.frontier = []
        with _deep_recursion():
            self.result = result = reader.arena.parse(ctx)
        stays = reader.fast and (reader.arena.root.id, 0) in ctx.memo
        try:
            fresh, mapped = reader.mapped_read(ctx, result, partial=True, diagnose=False)
        except Rejected as refusal:
            refusal = refusal.with_traceback(None)
            if stays:
                self.settled = refusal
            return refusal
        self.last, self.mapped = fresh, mapped
        if stays:
            self.settled = fresh
        if reader.fast and mapped is not None and mapped.tail is not None:
            self.growth = growth(reader.parsers, ctx, result, mapped.tail)
        if reader.fast and self.growth is None:
            self.stall = stall(reader.parsers, ctx, result)
        return fresh

    def parsed(self) -> Result:
        """The parse of the text so far."""
        if self.result is None:
            self.ctx.frontier = None
            with _deep_recursion():
                self.result = self.reader.arena.parse(self.ctx)
        return self.result

    def nodes(self) -> tuple[Node, ...]:
        """The nodes of the parse of the text so far (what the last read mapped)."""
        return self.parsed().nodes


Held = tuple[int, Mark, bool] | Rejected


class Record:
    """A reply read one character at a time, once for every stream of it (`Reader.record_of`): after each of
    its starts, the read held back (`hold_back`) or the refusal, and what a character-by-character stream
    shows (the held read where it adds to what was shown, else what was shown). A held read is kept as its
    mark in a read that extends it (`bases`), with whether it extends the one before by construction (the
    parse proved only an open span grows, `growth.shown_grown`); what streams look up is kept (`view`), and
    the runs of reply lengths whose parse read the whole input with a call closed (`closed`)."""

    def __init__(self, reader: Reader, start: str = "") -> None:
        """A record of a reply that starts with `start`, whose reads up to there a fork fills in (`forked`)."""
        self.reader = reader
        self.reading = Reading(reader, reader.prefix + start)
        self.bases: list[Message] = []
        self.held: list[Held | None] = [None]
        self.views: dict[int, tuple[Message | Rejected, bool]] = {}
        self.shown = Message()
        self.shown_marks: list[Mark] = [_mark(self.shown)]
        self.scans: list[ArgumentsScan] = []
        self.last: Message | None = None
        self.refusal: Rejected | None = None
        self.refused_at = 0
        self.closed: list[list[int]] = []

    @property
    def size(self) -> int:
        """How many characters of the reply were read."""
        return len(self.held) - 1

    def reply(self, size: int) -> str:
        """The reply's first `size` characters."""
        offset = len(self.reader.prefix)
        return self.reading.ctx.text[offset:offset + size]

    def extended(self, chunk: str, at: int) -> Record:
        """A record of a reply made of this one's first `at` characters and `chunk`, read at least through
        it: this record where its reply goes on with `chunk`, else a fork of the start they share."""
        recorded = self.reading.ctx.text
        offset = len(self.reader.prefix) + at
        if recorded.startswith(chunk, offset):
            return self
        overlap = min(len(chunk), len(recorded) - offset)
        if overlap > 0:
            ahead = chunk if overlap == len(chunk) else chunk[:overlap]
            if not recorded.startswith(ahead, offset):
                known = self.reader.recorded(self.reply(at) + chunk)
                if known is not None:
                    return known
                shared = at + common_prefix_length(recorded[offset:offset + overlap], ahead)
                fork = self.reader.kept(self.forked(shared))
                fork.advance(chunk[shared - at:])
                return fork
        if overlap < len(chunk):
            self.advance(chunk[max(overlap, 0):])
        return self

    def forked(self, shared: int) -> Record:
        """A record of a reply that shares its first `shared` characters with this one's: it takes what this
        one read of them and parses only that start, once, at its next character."""
        fork = Record(self.reader, self.reply(shared))
        if not shared:
            return fork
        fork.bases = self.bases[:]
        fork.held = self.held[:shared + 1]
        fork.shown_marks = self.shown_marks[:shared + 1]
        fork.shown = _truncated(self.shown, fork.shown_marks[-1])
        fork.closed = _runs_up_to(self.closed, shared)
        if self.refusal is not None and self.refused_at <= shared:
            fork.refusal, fork.refused_at = self.refusal, self.refused_at
        return fork

    def advance(self, rest: str) -> None:
        """Read on through `rest`, one character at a time; once nothing appended can change the read
        (`fixed`) or the reply nests too deep to read, the remaining characters repeat the last entry. One
        character the last read's open span takes (`Growth.takes`) lengthens it without parsing, so without
        allowing deep recursion."""
        reading = self.reading
        lengthens = (len(rest) == 1 and reading.growth is not None and reading.settled is None
                     and reading.growth.takes(rest))
        done = 0
        try:
            with NO_GUARD if lengthens else _deep_recursion():
                for char in rest:
                    if self.refusal is not None or self.fixed():
                        break
                    self.step(char)
                    done += 1
        except Rejected as refusal:
            self.refused(refusal.with_traceback(None))
            done += 1
        except BaseException:
            self.restart()
            raise
        if done < len(rest):
            self.repeat(rest[done:])

    def step(self, char: str) -> None:
        """Read one more character."""
        reading, reader, last = self.reading, self.reader, self.last
        fresh = reading.grow(char)
        if reading.result is not None and closes_a_call(reading.result):
            self.note_closed(len(self.held))
        if isinstance(fresh, Rejected):
            self.last = None
            self.held.append(fresh)
            self.shown_marks.append(self.shown_marks[-1])
            return
        text = reading.ctx.text
        held = None
        if last is not None and reading.result is None and reading.growth is not None:
            held = shown_grown(reading.growth, fresh, last, text, self.scans, reader.marker_starts)
        grew = held is not None
        if held is None:
            held = hold_back(fresh, text, reader.markers, self.scans, reading.nodes)
        mark = self.keep(held, grew)
        if not held.empty and ((grew and self.shown is last) or extends(self.shown, held)):
            self.shown = held
            self.shown_marks.append(mark)
        else:
            self.shown_marks.append(self.shown_marks[-1])
        self.last = held

    def keep(self, held: Message, grew: bool) -> Mark:
        """Note the held read of the reply so far, as its mark in a read that extends it; its mark."""
        bases = self.bases
        if bases and ((grew and bases[-1] is self.last) or extends(bases[-1], held)):
            bases[-1] = held
        elif not bases or not extends(held, bases[-1]):
            bases.append(held)
        mark = _mark(held)
        self.held.append((len(bases) - 1, mark, grew))
        return mark

    def refused(self, refusal: Rejected) -> None:
        """The reply nests too deep to read from its last character on."""
        self.refusal, self.refused_at = refusal, self.size + 1
        self.held.append(refusal)
        self.shown_marks.append(self.shown_marks[-1])

    def repeat(self, rest: str) -> None:
        """Append `rest`, each of its characters reading as the last one did."""
        self.reading.ctx.text += rest
        if self.refusal is None and self.closed and self.closed[-1][1] == self.size:
            self.closed[-1][1] += len(rest)
        entry = self.refusal if self.refusal is not None else self.held[-1]
        self.held.extend([entry] * len(rest))
        self.shown_marks.extend([self.shown_marks[-1]] * len(rest))

    def restart(self) -> None:
        """After an interrupted read: forget the character half read, and parse the reply read so far anew
        at the next character."""
        size = min(len(self.held), len(self.shown_marks))
        del self.held[size:], self.shown_marks[size:]
        self.closed = _runs_up_to(self.closed, size - 1)
        self.shown = _truncated(self.shown, self.shown_marks[-1])
        self.rest()

    def rest(self) -> None:
        """Drop the parse of the reply read so far (its memo tables) and the kept views; a character read on
        parses it anew."""
        self.reading = Reading(self.reader, self.reader.prefix + self.reply(self.size))
        self.scans, self.last, self.views = [], None, {}

    def fixed(self) -> bool:
        """Whether nothing appended can change the held read: the read settled (`Reading.settled`) and the
        input ends a marker's length past it (so holding back takes nothing of it)."""
        reading = self.reading
        if reading.settled is None or reading.result is None:
            return False
        return (isinstance(reading.settled, Rejected)
                or len(reading.ctx.text) - self.reader.longest_marker > reading.result.end)

    def note_closed(self, size: int) -> None:
        """Note that the parse of the reply's first `size` characters read them whole with a call closed."""
        if self.closed and self.closed[-1][1] == size - 1:
            self.closed[-1][1] = size
        else:
            self.closed.append([size, size])

    def complete_prefix(self, size: int) -> int | None:
        """`problems.complete_prefix` of the reply's first `size` characters: the length of their longest
        prefix whose parse read it whole with a call closed (-1: none); None where the record did not parse
        each of them (it holds fewer, or refused a reply nesting too deep)."""
        if size > self.size or (self.refusal is not None and self.refused_at <= size):
            return None
        for first, last in reversed(self.closed):
            if first <= size:
                return min(last, size)
        return -1

    def held_at(self, size: int) -> Message | Rejected:
        """The held read (or refusal) of the reply's first `size` characters, which were read."""
        if size == 0:
            return self.held_of_nothing()
        entry = self.held[size]
        assert entry is not None
        if isinstance(entry, Rejected):
            return entry
        if size == self.size and self.last is not None:
            return self.last
        index, mark, _ = entry
        return _truncated(self.bases[index], mark)

    def view(self, size: int) -> tuple[Message | Rejected, bool]:
        """`held_at(size)` and `grew(size)`, kept for the next stream of the reply up to VIEWS_UP_TO characters
        (past it, each kept view would copy a long text)."""
        found = self.views.get(size)
        if found is None:
            found = (self.held_at(size), self.grew(size))
            if size <= VIEWS_UP_TO:
                self.views[size] = found
        return found

    def held_of_nothing(self) -> Message | Rejected:
        """The held read (or refusal) of an empty reply."""
        reading = Reading(self.reader, self.reader.prefix)
        fresh = reading.read()
        if isinstance(fresh, Rejected):
            return fresh
        return hold_back(fresh, reading.ctx.text, self.reader.markers, [], reading.nodes)

    def grew(self, size: int) -> bool:
        """Whether the held read of the first `size` characters extends that of one fewer by construction."""
        entry = self.held[size]
        return entry is not None and not isinstance(entry, Rejected) and entry[2]

    def shown_at(self, size: int) -> Message:
        """What a character-by-character stream shows after the reply's first `size` characters."""
        if size == self.size:
            return self.shown
        return _truncated(self.shown, self.shown_marks[size])

    def shown_from(self, start: int, size: int) -> Message:
        """What a character-by-character stream shows after the reply's first `size` characters where, after
        the first `start` ones, it showed their held read (nothing where that was refused)."""
        first = self.held_at(start) if start else Message()
        shown = Message() if isinstance(first, Rejected) else first
        for at in range(start + 1, size + 1):
            if self.held[at] is self.held[at - 1]:
                continue
            held = self.held_at(at)
            if not isinstance(held, Rejected) and not held.empty and extends(shown, held):
                shown = held
        return shown


def _runs_up_to(runs: list[list[int]], size: int) -> list[list[int]]:
    """The runs of reply lengths (first, last) cut to those at most `size`."""
    return [[first, min(last, size)] for first, last in runs if first <= size]


class Stream:
    """A reply read as it arrives. Where the reader is `fast`, a feed looks up what the reader's record of the
    reply (`Record`, read one character at a time once for all the reply's streams) holds back at its end;
    else each feed parses on from where the last one stopped (`Reading`). Fed one character at a time, a
    stream shows what a character-by-character replay of it would."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.size = 0
        self.snapshot = Message()
        self.shown_at = 0
        self.reading = None if reader.fast else Reading(reader, reader.prefix)
        self.scans: list[ArgumentsScan] = []
        if reader.fast:
            self.record = reader.current_record()
        else:
            self.record = Record(reader)
        self.refusal: Rejected | None = None
        self.by_char = True

    @property
    def examined(self) -> int:
        """Characters the scanners looked at so far (the parsing work of this stream, or of the record it
        reads)."""
        reading = self.record.reading if self.reading is None else self.reading
        return reading.ctx.examined

    def feed(self, chunk: str) -> Message:
        """The snapshot after this chunk (the previous one when nothing new can be read yet); snapshots
        carry no problems, the finished reading does. Rejected when llama.cpp refuses the text so far as a
        cut reply (it does not start as the format starts), as llama-server's parse of it fails; the stream
        goes on, showing what it showed before. A reply that nests too deep to read is refused from then on,
        its finish too."""
        if self.refusal is not None:
            raise self.refusal
        self.by_char = self.by_char and len(chunk) == 1
        start = self.size
        self.size += len(chunk)
        try:
            held, grew = self.held_after(chunk, start)
            if isinstance(held, Rejected):
                raise held if held.reason == TOO_DEEP else self.reader.refusal(self.reader.prefix + self.text())
        except Rejected as refusal:
            if refusal.reason == TOO_DEEP:
                self.refusal = refusal.with_traceback(None)
            raise
        snapshot = self.snapshot
        adds = not held.empty and ((grew and len(chunk) == 1 and self.shown_at == start) or extends(snapshot, held))
        shows_held = adds and not self.reader.opens_call(held.content, len(snapshot.content))
        if shows_held and not (not self.by_char and self.reader.hides_calls(held, self.text)):
            self.snapshot, self.shown_at = held, self.size
        elif not self.by_char:
            replayed = self.replayed()
            if extends(snapshot, replayed):
                self.snapshot, self.shown_at = replayed, -1
        elif adds:
            self.snapshot, self.shown_at = held, self.size
        return self.snapshot

    def held_after(self, chunk: str, start: int) -> tuple[Message | Rejected, bool]:
        """The held read (or refusal) after `chunk`, fed after `start` characters, and whether it extends the
        one a character before by construction."""
        if self.reading is None:
            record = self.record.extended(chunk, start)
            if record is not self.record:
                self.record = self.reader.shared = record
            return record.view(self.size)
        with _deep_recursion():
            fresh = self.reading.grow(chunk)
            if isinstance(fresh, Rejected):
                return fresh, False
            return hold_back(fresh, self.reading.ctx.text, self.reader.markers, self.scans, self.reading.nodes), False

    def text(self) -> str:
        """The reply fed so far."""
        if self.reading is None:
            return self.record.reply(self.size)
        return self.reading.ctx.text[len(self.reader.prefix):]

    def replayed(self) -> Message:
        """What a character-by-character stream of the reply fed so far shows last: the record's where the
        reader is `fast`, else this stream's own record's, brought up to the text."""
        if self.reading is not None:
            self.record = self.record.extended(self.text(), 0)
        return self.record.shown_at(self.size)

    def feed_delta(self, chunk: str) -> Delta:
        """What llama-server sends after this chunk: what the snapshot after it (`feed`) adds to the one before,
        each field's text added and each call that grew by its index. Rejected as `feed` is."""
        before = self.snapshot
        return delta_between(before, self.feed(chunk))

    def finish_delta(self) -> Delta:
        """What the finished reading (`finish`) adds to the last snapshot, sent when the reply ends."""
        return delta_between(self.snapshot, self.finish())

    def finish(self) -> Message:
        """The finished reply's reading, equal to a whole parse of everything fed whatever the chunks were."""
        if self.refusal is not None:
            raise self.refusal
        if self.reading is None:
            return self.reader.parse(self.text())
        with _deep_recursion():
            result = self.reading.parsed()
            final = self.reader.read(self.reading.ctx, result, partial=False)
        return self.reader.finished(final, self.reading.ctx, result, self.record)


__all__ = ["Reader", "Reading", "Record", "Stream", "open_reader"]
