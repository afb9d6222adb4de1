"""llama-server itself, built from the pinned source (once, cached), writing replies through the tape model:
what it reads equals the oracle's, what it cannot write is labelled, and no server outlives a sweep."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatparity.model import Message, NotWritten, ToolCall
from corpora.catalog import plan
from harness.server_parser import ServerParser
from harness.server_process import LIVE
from harness.server_tape import Cause
from oracle.server_build import ensure_server, server_path

ROOT = Path(__file__).resolve().parent.parent
CALL = '<think>\nChecking.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call>'


@pytest.fixture(scope="session")
def server_built(pytestconfig: pytest.Config) -> Path:
    """The pinned llama-server, built before its first test past pytest's capture (minutes, once)."""
    if not server_path().exists():
        capture = pytestconfig.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            ensure_server()
    return server_path()


@pytest.fixture(scope="module")
def qwen3(server_built: Path) -> Iterator[tuple[ServerParser, object]]:
    """A parser on llama-server with a Qwen3 think/auto session (one user question, the tools offered)."""
    session = plan("server", templates="Qwen-Qwen3-0.6B*", mode="think/auto")[0].session
    parser = ServerParser()
    yield parser, session
    parser.close()


def test_the_server_writes_and_reads_a_reasoned_call(qwen3: tuple[ServerParser, object]) -> None:
    parser, session = qwen3
    reader = parser.open(session)  # type: ignore[arg-type]
    whole = reader.parse(CALL, False)
    assert whole == Message("", "Checking.\n", (ToolCall("get_weather", '{"city": "Rio"}'),))
    streamed = reader.stream([CALL], True)
    assert streamed.final == whole and list(streamed.snapshots)[-1].reasoning_content == "Checking.\n"


def test_a_cut_reply_reads_as_the_stream_last_showed_it(qwen3: tuple[ServerParser, object]) -> None:
    parser, session = qwen3
    reader = parser.open(session)  # type: ignore[arg-type]
    cut = CALL[: CALL.index('"arguments"')]
    read = reader.parse(cut, True)
    assert isinstance(read, Message) and read.reasoning_content == "Checking.\n"
    assert [call.name for call in read.tool_calls] == ["get_weather"]


def test_a_call_the_grammar_forbids_is_not_written(qwen3: tuple[ServerParser, object]) -> None:
    parser, session = qwen3
    reader = parser.open(session)  # type: ignore[arg-type]
    with pytest.raises(NotWritten) as raised:
        reader.parse('<think>\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": Rio}}\n'
                     "</tool_call>", False)
    assert raised.value.cause == Cause.GRAMMAR.value


def test_closing_the_parser_stops_its_server(server_built: Path) -> None:
    session = plan("server", templates="Qwen-Qwen3-0.6B*", mode="nothink/none")[0].session
    parser = ServerParser()
    assert parser.open(session).parse("Hello.", False) == Message("Hello.")
    assert parser.current is not None
    pid = parser.current[1].process.process.pid  # type: ignore[union-attr]
    assert pid in LIVE
    parser.close()
    assert pid not in LIVE and not Path(f"/proc/{pid}").exists()


def test_a_sweep_judges_the_server_and_leaves_no_server_behind(server_built: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "chatparity", "sweep", "--parser", "llama-server", "--profile", "server",
         "--templates", "Qwen-Qwen3-0.6B*", "--mode", "nothink/none", "-n", "1", "--out", str(out)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}, capture_output=True,
        text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = sqlite3.connect(out / "rows.sqlite").execute("select outcome, count(*) from rows group by 1").fetchall()
    counts = dict(rows)
    assert counts.get("match", 0) > 10 and set(counts) <= {"match", "not_written"}
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True, check=False).stdout
    assert not left.strip(), f"servers left behind: {left}"
