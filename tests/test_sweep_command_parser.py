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
readers, opened, CLOSE = set(), 0, sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    op, answer = request["op"], {}
    if op == "open":
        opened += 1
        readers.add(opened)
        thinks = request["session"]["enable_thinking"]
        answer = {"reader": opened} if thinks else {"unsupported": "no"}
    elif op == "close" and CLOSE == "exit":
        sys.exit(3)
    elif op == "close" and CLOSE == "error":
        answer = {"error": "unknown op close"}
    elif op == "close" and CLOSE == "unsupported":
        answer = {"unsupported": "close"}
    elif op == "close":
        readers.remove(request["reader"])
    elif op == "parse":
        text = request["text"]
        if text == "exit":
            sys.exit(4)
        if text == "hang":
            time.sleep(30)
        if text == "readers":
            text = str(len(readers))
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


def program_parser(tmp_path: Path, close: str) -> CommandParser:
    """PROGRAM as a parser, answering `close` by forgetting the reader (`forget`), with an error (`error`), as
    unsupported (`unsupported`) or by exiting (`exit`)."""
    program = tmp_path / "program.py"
    program.write_text(PROGRAM, encoding="utf-8")
    return CommandParser(f"{sys.executable} {program} {close}", timeout=2.0)


@pytest.fixture
def parser(tmp_path: Path):
    made = program_parser(tmp_path, "forget")
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


def test_close_lets_the_program_forget_its_readers(parser: CommandParser) -> None:
    readers = [parser.open(qwen_session(True)) for _ in range(3)]
    readers[0].close()
    readers[1].close()
    assert readers[2].parse("readers", False) == Message("1")


@pytest.mark.parametrize("close", ["error", "unsupported", "exit"])
def test_a_program_that_knows_no_close_keeps_working_and_is_sent_no_more(tmp_path: Path, close: str) -> None:
    parser = program_parser(tmp_path, close)
    try:
        first, second = parser.open(qwen_session(True)), parser.open(qwen_session(True))
        first.close()
        assert not parser.program.closes
        second.close()
        reader = parser.open(qwen_session(True))
        assert reader.parse("hi", False) == Message("hi")
        assert parser.program.generation == (2 if close == "exit" else 1)
    finally:
        parser.close()


def test_a_reader_of_a_program_since_restarted_is_not_closed(parser: CommandParser) -> None:
    reader = parser.open(qwen_session(True))
    with pytest.raises(ParserCrashed):
        reader.parse("exit", False)
    other = parser.open(qwen_session(True))
    reader.close()
    assert parser.program.closes and other.parse("readers", False) == Message("1")
