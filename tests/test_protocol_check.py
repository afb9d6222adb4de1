"""`chatparity protocol-check`: a program driven through the protocol offline, each violation on a line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from chatparity.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
BROKEN = f"{sys.executable} {ROOT / 'tests' / 'broken_protocol_parser.py'}"
NODE = f"node {ROOT / 'examples' / 'hermes_parser' / 'parser.mjs'}"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    """The command's exit status, its stdout lines and its stderr."""
    status = cli(["protocol-check", *args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def test_the_node_example_keeps_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, _ = check(capsys, f"cmd:{NODE}")
    assert status == 0 and lines == ["PASS: 19 requests, no protocol violation"]


def test_each_violation_of_a_broken_program_is_a_line_naming_request_field_and_problem(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, lines, _ = check(capsys, BROKEN)
    violations = [line for line in lines[1:] if not line.startswith("note: ")]
    assert status == 1 and lines[0] == f"FAIL: {len(violations)} protocol violations in 20 requests"
    assert violations[0] == "parse #3 (text \"\", partial false): reading.content: 5 is not of type 'string'"
    assert violations[2] == (
        "parse #5 (text \"\\n\\n\", partial false): (answer): answer is not JSON: b'debug: whitespace\\n' "
        "(stdout carries only answers; write logs to stderr)"
    )
    assert (
        'parse #7 (text " It is sunny,\\tsays the\\r\\n"… (34 characters), partial false): reading: '
        "'tool_calls' is a required property" in violations
    )
    assert (
        'stream #12 (chunks ["It is ", "sunny."], finish true): snapshots: 1 readings for 2 chunks '
        "(one snapshot per chunk)"
    ) in violations
    assert (
        'stream #12 (chunks ["It is ", "sunny."], finish true): final: missing (finish is true)' in violations
    )
    assert not any(line.startswith("stream #14") and "final" in line for line in violations)
    assert (
        "open #16 (a second reader, session 1, Qwen-Qwen3-0.6B.jinja): "
        'reader: "same" again: each open makes a new reader'
    ) in violations
    assert lines[-3:] == [
        "note: info #1: answered an error: unknown op info",
        "note: close #18: answered an error: unknown op close",
        "note: close #20: answered an error: unknown op close",
    ]


def test_a_program_that_declines_every_session_cannot_be_judged(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, _ = check(capsys, f"{BROKEN} declines")
    assert status == 2
    assert lines[0] == (
        "CANNOT JUDGE: the program declines every session offered (4); "
        "name a template it reads with --templates"
    )
    assert "note: open #2 (session 1, Qwen-Qwen3-0.6B.jinja): unsupported: not mine" in lines


def test_a_program_that_cannot_start_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = check(capsys, "no-such-parser-program --json")
    assert status == 2 and lines == []
    assert err.startswith(
        "chatparity protocol-check: parser command 'no-such-parser-program --json' cannot start"
    )


def test_templates_offer_the_quick_profile_sessions_of_those_templates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, lines, _ = check(capsys, NODE, "--templates", "Qwen-Qwen3-0.6B.jinja")
    assert status == 0 and lines == ["PASS: 19 requests, no protocol violation"]
    status, lines, _ = check(capsys, NODE, "--templates", "meta-llama-Llama-3.1-8B-Instruct.jinja")
    assert status == 2 and lines[0].startswith("CANNOT JUDGE: the program declines every session offered")
    assert lines[1] == (
        "note: open #2 (session 1, meta-llama-Llama-3.1-8B-Instruct.jinja): "
        "unsupported: not a hermes template"
    )
