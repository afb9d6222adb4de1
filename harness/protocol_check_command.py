"""`chatparity protocol-check COMMAND`: drive a parser program through the protocol's exchanges, offline, and
print each violation on a line."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from corpora import catalog
from corpora.planning import PlanError
from harness.command_parser import session_json
from harness.protocol_check import Report, check_program, shipped_sessions

DEFAULT_TIMEOUT = 10.0
FOUND = 1
CANNOT_JUDGE = 2


def arguments(prog: str) -> argparse.ArgumentParser:
    """The protocol-check command's flags."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Drive a parser program through every request kind of the subprocess protocol (info, "
        "open, parse, stream, close) with edge cases (empty, whitespace-only, astral and cut replies, a long "
        "line, two readers at once), without llama.cpp, and print one line per protocol violation: the "
        "request, the field of the answer, what was wrong. Exit status: 0 no violation, 1 violations, 2 "
        "nothing could be checked (the program cannot start, or declines every session).",
    )
    parser.add_argument(
        "command", metavar="COMMAND", help="the program's command line ('cmd:' before it is allowed)"
    )
    parser.add_argument(
        "--templates",
        metavar="GLOB",
        help="offer sessions of these templates (the quick profile's; needs the upstream templates, not the "
        "oracle) instead of the Qwen3 sessions shipped with the protocol's transcript",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds each request may take (default: 10)"
    )
    return parser


def offered_sessions(templates: str | None) -> list[dict[str, Any]]:
    """The sessions to open: the shipped transcript's, or the quick profile's of the templates named."""
    if templates is None:
        return shipped_sessions()
    return [session_json(planned.session) for planned in catalog.plan("quick", templates=templates)]


def verdict_lines(report: Report) -> list[str]:
    """The verdict first, then one line per violation, then the notes."""
    if report.violations:
        head = f"FAIL: {len(report.violations)} protocol violations in {report.requests} requests"
    elif report.unchecked:
        head = f"CANNOT JUDGE: {report.unchecked}; name a template it reads with --templates"
    else:
        head = f"PASS: {report.requests} requests, no protocol violation"
    notes = [f"note: {note}" for note in report.notes]
    return [head, *(violation.line() for violation in report.violations), *notes]


def main(argv: list[str], prog: str = "chatparity protocol-check") -> int:
    """Check the program: 0 when it keeps the protocol, 1 when it breaks it, 2 when nothing was checked."""
    args = arguments(prog).parse_args(argv)
    command = args.command.removeprefix("cmd:")
    try:
        sessions = offered_sessions(args.templates)
        if not sessions:
            raise ValueError(f"--templates {args.templates!r}: no session planned")
        report = check_program(command, sessions, args.timeout)
    except (ValueError, PlanError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return CANNOT_JUDGE
    print("\n".join(verdict_lines(report)))
    if report.violations:
        return FOUND
    return CANNOT_JUDGE if report.unchecked else 0
