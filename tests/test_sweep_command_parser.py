"""The subprocess protocol's failure modes: a crash, a hang, a malformed answer, a restart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sweep_corpus import QWEN3, planned

from chatparity.model import (
    Message,
    ParserCrashed,
    ParserTimeout,
    ParserUnsupported,
    Rejection,
    Session,
    StreamRead,
    ToolMode,
)
from harness.command_parser import CommandParser

PROGRAM = r"""
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    op, answer = request["op"], {}
    if op == "open":
        answer = {"unsupported": "no"} if request["session"]["enable_thinking"] is False else {"reader": "r"}
    elif op == "parse":
        text = request["text"]
        if text == "exit":
            sys.exit(4)
        if text == "hang":
            time.sleep(30)
        answer = {"reading": {"rejected": "bad"}} if text == "bad" else {"reading": {"content": text}}
    elif op == "stream":
        chunks, text, snapshots = request["chunks"], "", []
        for chunk in chunks:
            text += chunk
            snapshots.append({"content": text})
        if text == "short":
            snapshots = snapshots[:1]
        answer = {"snapshots": snapshots, "final": {"content": text + "!"}}
    print(json.dumps({"id": request["id"], **answer}), flush=True)
"""


def qwen_session(thinking: bool) -> Session:
    """A hand-made Qwen3 session."""
    return planned(QWEN3, thinking, ToolMode.AUTO).session


@pytest.fixture
def parser(tmp_path: Path):
    program = tmp_path / "program.py"
    program.write_text(PROGRAM, encoding="utf-8")
    made = CommandParser(f"{sys.executable} {program}", timeout=2.0)
    yield made
    made.close()


def test_parse_stream_and_rejections_round_trip(parser: CommandParser) -> None:
    reader = parser.open(qwen_session(True))
    assert reader.parse("hi", False) == Message("hi")
    assert reader.parse("bad", False) == Rejection("bad")
    assert reader.stream(["a", "b"], finish=True) == StreamRead((Message("a"), Message("ab")), Message("ab!"))
    assert reader.stream(["a", "b"], finish=False).final == Message("ab")


def test_unsupported_at_open(parser: CommandParser) -> None:
    with pytest.raises(ParserUnsupported, match="no"):
        parser.open(qwen_session(False))


def test_a_crash_costs_one_call_and_the_reader_reopens(parser: CommandParser) -> None:
    reader = parser.open(qwen_session(True))
    with pytest.raises(ParserCrashed, match="exited with status 4"):
        reader.parse("exit", False)
    assert reader.parse("again", False) == Message("again")


def test_a_hang_is_a_timeout_and_the_program_restarts(parser: CommandParser) -> None:
    parser.program.timeout = 0.5
    reader = parser.open(qwen_session(True))
    with pytest.raises(ParserTimeout):
        reader.parse("hang", False)
    assert reader.parse("after", False) == Message("after")


def test_a_wrong_number_of_snapshots_is_a_crash(parser: CommandParser) -> None:
    reader = parser.open(qwen_session(True))
    with pytest.raises(ParserCrashed, match="expected 5 snapshots"):
        reader.stream(list("short"), finish=True)
