"""The project parser's conformance on one template, read by the harness's own runner: the rows a sweep
would store (the same comparison, server view and stream checks), each failing row described."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from functools import cache

import pytest

import reply
from chatparity.model import Outcome, Reply, Row
from corpora import catalog
from corpora.planning import PlannedSession
from harness.oracle_cache import OracleCache, default_directory
from harness.oracle_reads import OracleIdentity, OracleReads
from harness.parser_specs import PROJECT_EXPECTATIONS, PROJECT_ROOT, load_parser, parser_spec
from harness.policies import POLICIES_FILE, Policies, load_policies
from harness.runner import SessionRunner
from reports.statuses import FAILING_STATUSES, Status, status_of

PARSER = "reply"
STREAM_CHECKS = ("consistent", "monotonic", "clean", "snapshot_parity")
FAILING = {Status(value) for value in FAILING_STATUSES}
Extras = Callable[[PlannedSession], Sequence[tuple[str, bool]]]


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
def reply_policies() -> Policies:
    """The project parser's policies, as the sweep labels its rows with them."""
    return load_policies(PROJECT_ROOT / PROJECT_EXPECTATIONS / POLICIES_FILE)


@cache
def parser() -> object:
    """The project parser as the sweep drives it."""
    return load_parser(parser_spec(PARSER))


def extra_replies(texts: Sequence[tuple[str, bool]]) -> list[Reply]:
    """Hand-made replies (text, partial) as corpus replies of origin `extra`."""
    return [Reply(text, partial, "extra", "extra-cut" if partial else "extra") for text, partial in texts]


def failures(rows: Sequence[Row], strict: bool = True) -> list[str]:
    """The rows that fail: a difference from llama.cpp's reading that neither the parser's policies nor a
    llama.cpp defect explains, an error, or a stream check the parser breaks; unless `strict` (rows the sweep
    never reads), a row a known divergence selects may also match."""
    failing = []
    for row in rows:
        status = status_of(row.outcome, row.explained)
        broken = [check for check in STREAM_CHECKS if getattr(row, check) == 0]
        if status in FAILING or (strict and status is Status.UNEXPECTED_MATCH):
            failing.append(
                f"{row.mode} {row.chunking} partial={row.partial} {row.reply!r}: {status.value} {row.kind} "
                f"{row.detail or row.error} (parser {row.parser_reading}, llama.cpp {row.oracle_reading})"
            )
        elif broken:
            failing.append(f"{row.mode} {row.chunking} {row.reply!r}: {row.stream_detail}")
    return failing


def run_rows(
    planned: PlannedSession, replies: Sequence[Reply], streamed: Callable[[Reply], bool]
) -> tuple[Row, ...]:
    """The rows of one session: every reply whole, the `streamed` ones also fed one character at a time."""

    def applies(chunking: str, reply_: Reply) -> bool:
        return chunking == "whole" or streamed(reply_)

    return SessionRunner(
        planned, replies, parser(), oracle_reads(), ("whole", "char"), applies, policies=reply_policies()
    ).run().rows


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
            (dataclasses.replace(plan, session=dataclasses.replace(plan.session, mode=dataclasses.replace(plan.session.mode, reasoning_format="none"))), False)
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
            lambda item, streamed=streamed, sampled=sampled: (
                streamed and bool(item.text) and not item.partial and (item.text, False) in sampled
            ),
        )
        tally.whole += sum(row.chunking == "whole" for row in rows)
        tally.streamed += sum(row.chunking == "char" for row in rows)
        tally.with_calls += sum(
            row.chunking == "whole" and row.outcome == Outcome.MATCH.value and '"tool_calls": [{' in (row.oracle_reading or "")
            for row in rows
        )
        strict = plan.session.reasoning_format != "none"
        found = failures(rows, strict)
        tally.differences += [f"{plan.session.reasoning_format} {failure}" for failure in found]
    return tally
