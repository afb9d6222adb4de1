"""The project parser's conformance on one template, read by the harness's own runner: the rows a sweep
would store (the same comparison, server view and stream checks), each failing row described."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from functools import cache

import pandas as pd
import pytest

import reply
from chatparity.model import (
    Message,
    Outcome,
    Reading,
    Rejection,
    Reply,
    Row,
    Session,
    columns,
    reading_from_json,
)
from corpora import catalog
from corpora.planning import PlannedSession
from harness import compare as comparison
from harness.oracle_cache import OracleCache, default_directory
from harness.oracle_reads import OracleIdentity, OracleReads
from harness.parser_specs import load_parser, parser_spec
from harness.runner import SessionRunner
from reply.promises import ArgumentsScan, closed_arguments, shown_arguments
from reply.reader import Reader, arriving_marker, extends
from reports.divergences import DEFAULT_PATH, apply_divergences, load_divergences
from reports.statuses import Status

PARSER = "reply"
STREAM_CHECKS = ("consistent", "monotonic")
Extras = Callable[[PlannedSession], Sequence[tuple[str, bool]]]
ALIGNMENT = 64


@dataclass
class Tally:
    """Rows read and the failing ones (each a short description)."""

    whole: int = 0
    streamed: int = 0
    with_calls: int = 0
    differences: list[str] = field(default_factory=list)


@cache
def oracle_reads() -> OracleReads:
    """The oracle as the sweep reads it: llama.cpp at the pin, through the shared answer cache."""
    return OracleReads(OracleIdentity.of(), OracleCache(default_directory()))


@cache
def parser() -> object:
    """The project parser as the sweep drives it."""
    return load_parser(parser_spec(PARSER))


def extra_replies(texts: Sequence[tuple[str, bool]]) -> list[Reply]:
    """Hand-made replies (text, partial) as corpus replies of origin `extra`."""
    return [Reply(text, partial, "extra", "extra-cut" if partial else "extra") for text, partial in texts]


def common_suffix(first: str, second: str, second_end: int, most: int) -> int:
    """How many characters (at most `most`) `first` and `second[:second_end]` end with alike."""
    size, limit = 0, min(len(first), second_end, most)
    while size < limit and first[-1 - size] == second[second_end - 1 - size]:
        size += 1
    return size


def aligned_hold(shown: str, text: str, arriving: int) -> str:
    """`shown` without what of it lies in the last `arriving` characters of `text` (a marker start), found by
    string alignment, since llama.cpp's read has no nodes. Its grammar may already have kept back some of the
    text's last characters (an until() stops before a partial delimiter), so `shown` ends where `text` minus
    those ends: of the ways to line the two up, the longest agreement (over the last ALIGNMENT characters past
    the marker start; on a tie, the one where the grammar kept back more) wins."""
    if not shown or not arriving:
        return shown
    most = arriving + ALIGNMENT
    whole = min(len(shown), most)
    agreement, kept_back = 0, 0
    for kept in range(arriving + 1):
        inside = arriving - kept
        aligned = common_suffix(shown, text, len(text) - kept, most)
        if inside <= aligned and (inside < aligned or aligned == whole) and aligned >= agreement:
            agreement, kept_back = aligned, inside
    return shown[:len(shown) - kept_back]


def held(reader: Reader, read: Message, text: str) -> reply.Message:
    """llama.cpp's read of `text` with the start of a marker, or of a value, still arriving held back."""
    calls = tuple(reply.ToolCall(call.name, shown_arguments(call.arguments, ArgumentsScan()), call.id)
                  for call in read.tool_calls)
    full = reader.prefix + text
    arriving = arriving_marker(full, reader.markers)
    reasoning, content = (aligned_hold(shown, full, arriving) for shown in (read.reasoning_content, read.content))
    return reply.Message(reasoning, content, calls)


def closed(read: Message) -> Message:
    """llama.cpp's finished read with each call's arguments closed into a JSON object (reply/promises.py)."""
    calls = tuple(dataclasses.replace(call, arguments=closed_arguments(call.arguments)) for call in read.tool_calls)
    return dataclasses.replace(read, tool_calls=calls)


def same(expected: Reading, row: Row) -> bool:
    """Whether the row's parser reading equals `expected` under the harness's comparison, the parser's
    arguments allowed to close what `expected` leaves open (a finished reply's calls are closed)."""
    if row.parser_reading is None:
        return False
    got = reading_from_json(json.loads(row.parser_reading))
    if isinstance(got, Message) and isinstance(expected, Message) and len(got.tool_calls) == len(expected.tool_calls):
        calls = tuple(
            dataclasses.replace(mine, arguments=shown.arguments)
            if mine.arguments.startswith(shown.arguments) and set(mine.arguments[len(shown.arguments):]) <= set('"]} ')
            else mine
            for mine, shown in zip(got.tool_calls, expected.tool_calls)
        )
        got = dataclasses.replace(got, tool_calls=calls)
    return comparison.compare(expected, got) is None


def held_back(reader: Reader, row: Row) -> bool:
    """Whether a cut-off reply's reading is llama.cpp's, held back (the parser's documented difference)."""
    oracle = reading_from_json(json.loads(row.oracle_reading or "{}"))
    return isinstance(oracle, Message) and same(Message.of(held(reader, oracle, row.reply)), row)


def last_shown(reader: Reader, session: Session, text: str) -> Message:
    """What llama-server last showed streaming `text` character by character, each read held back and kept
    only when it adds to the one before (the parser's reading of a reply llama.cpp reads as nothing). A cut
    whose streamed read repeats the one before is read again on its own: only a read of its own counts."""
    oracle = oracle_reads().session(session)
    partials = oracle.partials(text, range(1, len(text) + 1))
    last, before = reply.Message(), None
    for cut, read in partials.items():
        repeated, before = read == before, read
        if repeated and isinstance(read, Message):
            read = oracle.parse(text[:cut], True)
        if isinstance(read, Message):
            fresh = held(reader, read, text[:cut])
            if not fresh.empty and extends(last, fresh):
                last = fresh
    return Message.of(last)


def as_streamed(reader: Reader, session: Session) -> Callable[[Row], bool]:
    """The parser's documented differences from llama.cpp (reply/__init__.py), as expected failures: a cut-off
    reply, or the end of a stream, shows llama.cpp's read with a marker or value still arriving held back (and
    a finished call's arguments closed from their closable prefix into a JSON object); a finished reply whose
    calls llama.cpp ends with arguments that are not a JSON object reads with them closed; a reply llama.cpp
    reads as nothing (empty or refused) shows what llama-server last showed streaming it, held back the same
    way."""

    def expected(row: Row) -> bool:
        if row.outcome != Outcome.MISMATCH.value:
            return False
        oracle = reading_from_json(json.loads(row.oracle_reading or "{}"))
        finished_calls = not row.partial and row.kind == "calls"
        if finished_calls and isinstance(oracle, Message) and same(closed(oracle), row):
            return True
        if (row.partial or row.chunking != "whole" or row.kind == "calls") and held_back(reader, row):
            return True
        shows_nothing = isinstance(oracle, Rejection) or oracle == Message()
        return shows_nothing and same(last_shown(reader, session, row.reply), row)

    return expected


def failures(
    rows: Sequence[Row], expected: Callable[[Row], bool] = lambda row: False, strict: bool = True
) -> list[str]:
    """The rows that fail: not a match (known divergences and `expected` failures aside), or a broken
    consistent/monotonic check; unless `strict` (rows the sweep never reads, whose divergence entries were
    not written for them), a row a known divergence selects may also match."""
    frame = pd.DataFrame([dataclasses.asdict(row) for row in rows], columns=columns(Row))
    verdict = apply_divergences(frame, frame, load_divergences(DEFAULT_PATH))
    passing = {Status.MATCH.value, Status.KNOWN.value, Status.UNSUPPORTED.value}
    if not strict:
        passing.add(Status.UNEXPECTED_MATCH.value)
    failing = []
    for row, status in zip(rows, verdict.rows["status"]):
        if status in passing or expected(row):
            broken = [check for check in STREAM_CHECKS if getattr(row, check) == 0]
            if not broken:
                continue
            failing.append(f"{row.mode} {row.chunking} {row.reply!r}: {row.stream_detail}")
        else:
            failing.append(
                f"{row.mode} {row.chunking} partial={row.partial} {row.reply!r}: {status} {row.kind} "
                f"{row.detail or row.error} (parser {row.parser_reading}, llama.cpp {row.oracle_reading})"
            )
    return failing


def run_rows(
    planned: PlannedSession, replies: Sequence[Reply], streamed: Callable[[Reply], bool]
) -> tuple[Row, ...]:
    """The rows of one session: every reply whole, the `streamed` ones also fed one character at a time."""

    def applies(chunking: str, reply_: Reply) -> bool:
        return chunking == "whole" or streamed(reply_)

    return SessionRunner(planned, replies, parser(), oracle_reads(), ("whole", "char"), applies).run().rows


def compare(
    oracle: object,
    template: str,
    extra: tuple[str, ...],
    syntax: str,
    stream_every: int = 4,
    modes: tuple[str, ...] = ("*",),
) -> Tally:
    """Every quick-profile session of the template through the harness runner: each corpus reply and each
    extra reply (finished, and cut at half and two before the end) whole; every `stream_every`-th finished
    corpus reply (and the extras in every third session) per character; then the same sessions with
    reasoning_format none, whole only. `oracle` (the test's llama.cpp fixture) is unused: the runner reads
    llama.cpp through the sweep's cached adapter."""
    extras = [(text, False) for text in extra] + [
        (text[:cut], True) for text in extra for cut in (len(text) // 2, len(text) - 2)
    ]
    return conform(template, syntax, lambda planned: extras, modes, stream_every)


def conform(
    template: str,
    syntax: str,
    extras: Extras,
    modes: tuple[str, ...] = ("*",),
    stream_every: int = 4,
    corpus: bool = True,
    sessions: int | None = None,
    reasoning_none: bool = True,
    conversation: str = "*",
) -> Tally:
    """The template's quick-profile sessions of the `conversation` glob (the first `sessions` of them) read by
    the harness runner: catalog replies when `corpus`, plus `extras(planned)`; finished replies streamed per
    character by the sampling rule of `compare` (none when `stream_every` is 0), cut-off extras always; then
    reasoning_format none, whole only, when `reasoning_none`. A session jinja2 cannot render (the template fails
    on its tools) must be refused with RenderFailed, and has no replies to read."""
    tally = Tally()
    planned = [
        p
        for mode in modes
        for p in catalog.plan("quick", templates=template, mode=mode)
        if fnmatch(p.session.conversation, conversation)
    ]
    planned = planned[:sessions] if sessions is not None else planned
    assert planned, f"no sessions for {template}"
    runs = [(plan, True) for plan in planned]
    if reasoning_none:
        runs += [
            (dataclasses.replace(plan, session=dataclasses.replace(plan.session, reasoning_format="none")), False)
            for plan in planned
        ]
    for number, (plan, streamed) in enumerate(runs):
        if plan.jinja_error:
            with pytest.raises(reply.RenderFailed):
                reply.open(plan.session)
            continue
        reader = reply.open(plan.session)
        chosen = reader.syntax.name
        assert chosen == syntax, f"{template}: read as {chosen}"
        assert plan.entry.syntax == syntax, f"{template}: the index names syntax {plan.entry.syntax}"
        corpus_replies = list(catalog.replies(plan, "quick")) if corpus else []
        replies = corpus_replies + extra_replies(extras(plan))
        sampled = {
            (item.text, item.partial)
            for index, item in enumerate(replies)
            if stream_every and (index % stream_every == 0 or (index >= len(corpus_replies) and number % 3 == 0))
        }
        rows = run_rows(
            plan,
            replies,
            lambda item: streamed and bool(item.text) and not item.partial and (item.text, False) in sampled,
        )
        tally.whole += sum(row.chunking == "whole" for row in rows)
        tally.streamed += sum(row.chunking == "char" for row in rows)
        tally.with_calls += sum(
            row.chunking == "whole" and row.outcome == Outcome.MATCH.value and '"tool_calls": [{' in (row.oracle_reading or "")
            for row in rows
        )
        strict = plan.session.reasoning_format != "none"
        found = failures(rows, as_streamed(reader, plan.session), strict)
        tally.differences += [f"{plan.session.reasoning_format} {failure}" for failure in found]
    return tally
