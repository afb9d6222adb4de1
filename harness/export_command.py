"""`chatparity export`: a profile's cases with llama.cpp's readings, whole and streamed, as an export file that
`chatparity sweep --oracle FILE` judges a parser against without llama.cpp."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from chatparity.model import (
    Case,
    InputError,
    ParserCrashed,
    ParserUnderTest,
    Reading,
    Session,
    reading_to_json,
)
from harness import chunkings
from harness.command_parser import session_json
from harness.export_file import header, write_export
from harness.export_reads import RecordingReads
from harness.input_rules import broken_input
from harness.oracle_cache import OracleCache, default_directory, take_notes
from harness.oracle_reads import OracleFailed, OracleIdentity, OracleSession, RenderFailed, RenderInfo
from harness.parsers import DEFAULT_TIMEOUT
from harness.profiles import rules_of
from harness.runner import SessionRunner
from harness.server_view import ServerStream, server_final
from harness.sources import CatalogSource
from harness.sweep_command import add_oracle_flags, add_selection_flags
from harness.sweep_config import SweepConfig
from oracle.partial_reads import encoded

NOT_READ = ParserCrashed("not read: an export holds llama.cpp's readings alone")
"""The parser the export's runner reads with: none (every row is the oracle's reads alone)."""


def arguments(prog: str) -> argparse.ArgumentParser:
    """The export's flags."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write a profile's cases with llama.cpp's readings (whole, and each chunking's snapshots) "
        "as JSON lines, for 'chatparity sweep --oracle FILE' or any conformance suite.",
    )
    add_selection_flags(parser)
    add_oracle_flags(parser)
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help=f"seconds per oracle call (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="the export file (.jsonl)")
    return parser


def request_of(session: Session) -> dict[str, Any]:
    """What the parser protocol's `open` carries for a session, the template named by its name and sha256
    rather than given whole."""
    request = session_json(session)
    del request["template_source"]
    return {**request, "template_sha256": session.template_sha256}


def session_fields(session: Session) -> dict[str, Any]:
    """The fields of a line that name its session."""
    return {
        "session": session.id,
        "template": session.template,
        "template_sha256": session.template_sha256,
        "mode": session.mode.label,
        "request": request_of(session),
    }


def streamed(runner: SessionRunner, oracle: OracleSession, case: Case, names: tuple[str, ...],
             final: Reading) -> dict[str, list[dict[str, Any]]]:
    """Each chunking's streams of the case: the chunks, llama-server's snapshot after each (as
    `partial_reads.encoded` writes them) and the reading the stream ends on; none where llama.cpp failed."""
    reply = case.reply
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    streamed_names = [name for name in names if name != "whole"]
    try:
        tokens = (oracle.reads.tokens(runner.vocab(), reply.text)
                  if any(chunkings.needs_tokens(name) for name in streamed_names) else None)
        made = {name: chunkings.streams(name, reply.text, tokens) for name in streamed_names}
        union = chunkings.all_boundaries(chunkings.boundaries(chunks) for each in made.values() for chunks in each)
        partials = oracle.partials(reply.text, union)
        kept = oracle.kept_at(reply.text, union)
    except OracleFailed:
        return found
    for name, streams in made.items():
        for chunks in streams:
            snapshots = list(ServerStream(chunkings.boundaries(chunks), partials, kept))
            end = server_final(snapshots, final, reply.partial)
            found[name].append({"chunks": list(chunks), "snapshots": encoded(snapshots), "end": reading_to_json(end)})
    return found


def session_lines(runner: SessionRunner, reads: RecordingReads) -> list[dict[str, Any]]:
    """The case lines of one session: the sweep's oracle reads of every case made (as its runner makes them),
    each case's readings, and the answers given, each on the first line whose reply it concerns (the session's
    render on its first line). A session llama.cpp refuses to render runs at no chunking, as in a sweep; one
    without a case is a line without `case`, holding its render."""
    oracle = reads.session(runner.session)
    render: RenderInfo | None = None
    failed, declined = "", False
    try:
        render = oracle.render()
    except (RenderFailed, OracleFailed) as error:
        failed, declined = f"render: {error}", isinstance(error, RenderFailed)
    lines: list[dict[str, Any]] = []
    for case, names in runner.cases():
        final: Reading | None = None
        why = failed
        if render is not None:
            runner.case_rows(oracle, NOT_READ, case, names, runner.markers(render), runner.leak_markers(render))
            try:
                final = oracle.parse(case.reply.text, case.reply.partial)
            except OracleFailed as error:
                why = str(error)
        if final is not None:
            streams = streamed(runner, oracle, case, names, final)
        else:
            streams = {} if declined else {name: [] for name in names}
        lines.append({
            **session_fields(runner.session),
            "case": case.id,
            "reply": case.reply.text,
            "partial": case.reply.partial,
            "origin": case.reply.origin,
            "shape": case.reply.shape,
            "reading": reading_to_json(final) if final is not None else {"error": why},
            "chunkings": streams,
            "answers": [],
        })
    if not lines:
        lines.append({**session_fields(runner.session), "answers": []})
    for parts, value in reads.taken():
        at = next((index for index, line in enumerate(lines) if line.get("reply") in parts), 0)
        lines[at]["answers"].append([parts, value])
    return lines


def exported(config: SweepConfig, reads: RecordingReads) -> Iterator[dict[str, Any]]:
    """Every case line of the selection, session by session in the plan's order."""
    source = CatalogSource()
    rules = rules_of(config.profile)
    for planned in source.plan(config):
        replies = source.replies(planned, config.profile)
        broken = broken_input(planned.session, replies)
        if broken:
            raise InputError(f"{planned.session.template} [{planned.session.mode.label}]: input rule: {broken}")
        runner = SessionRunner(planned, replies, cast(ParserUnderTest, None), reads, rules.chunkings,
                               rules.for_mode(planned.session.mode.label))
        yield from session_lines(runner, reads)
        reads.flush()


def main(argv: list[str], prog: str = "chatparity export") -> int:
    """Write the export; wrong input is one line and exit status 2."""
    options = arguments(prog).parse_args(argv)
    config = SweepConfig(parser="", profile=options.profile, out=str(options.out), templates=options.templates,
                         family=options.family, mode=options.mode, oracle_version=options.oracle_version)
    try:
        identity = OracleIdentity.of(options.oracle_version)
        if not CatalogSource().plan(config):
            raise InputError("no session matches the selection")
    except ValueError as error:
        raise InputError(str(error)) from None
    cache = None if options.no_oracle_cache else OracleCache(options.oracle_cache or default_directory())
    reads = RecordingReads(identity, cache, options.timeout)
    selection = {"templates": options.templates, "family": options.family, "mode": options.mode}
    try:
        count = write_export(options.out, header(identity, options.profile, rules_of(options.profile).chunkings,
                                                 selection), exported(config, reads))
    finally:
        reads.close()
    for note in take_notes():
        print(f"{prog}: warning: {note}", file=sys.stderr)
    print(f"{count} cases of the {options.profile} profile written to {options.out}")
    return 0
