"""Drills: a parser program or an oracle that misbehaves costs the rows it was asked about, within --timeout."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

import pytest

from chatparity.model import Rejection
from oracle.build import binary_path
from oracle.client import BINARY_ENV, Oracle, OracleCrashed
from tests.drill_support import QWEN3, chatparity, corpus_file, rows, sweep

STALLS = '''
import os, sys, time
sys.stdin.readline()
os.close(1)
time.sleep(120)
'''
DEAF = '''
import time
time.sleep(120)
'''
STOPS_READING = '''
import json, sys, time
request = json.loads(sys.stdin.readline())
print(json.dumps({"id": request["id"], "reader": 1}), flush=True)
time.sleep(120)
'''
ORACLE_WRAPPER = '''
import json, os, subprocess, sys
FAULT, OP = os.environ["DRILL_FAULT"], os.environ["DRILL_OP"]
child = subprocess.Popen([{binary!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for line in sys.stdin.buffer:
    request = json.loads(line)
    if request.get("op") == OP:
        if FAULT == "garbage":
            sys.stdout.buffer.write(b"this is not json\\n")
        elif FAULT == "wrong-id":
            sys.stdout.buffer.write(json.dumps({{"id": request["id"] + 1000}}).encode() + b"\\n")
        elif FAULT == "error":
            sys.stdout.buffer.write(json.dumps({{"id": request["id"], "error": "std::bad_alloc"}}).encode() + b"\\n")
        elif FAULT == "abort":
            os.abort()
        sys.stdout.flush()
        continue
    child.stdin.write(line)
    child.stdin.flush()
    sys.stdout.buffer.write(child.stdout.readline())
    sys.stdout.flush()
'''


def program(directory: Path, name: str, source: str) -> Path:
    """An executable Python script written into `directory`."""
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def wrapper(tmp_path: Path) -> Path:
    """A wrapper around the real oracle binary that misbehaves on one op (DRILL_FAULT, DRILL_OP)."""
    return program(tmp_path, "oracle-wrapper", ORACLE_WRAPPER.format(binary=str(binary_path())))


@pytest.mark.parametrize(("script", "outcome"), [(STALLS, "parser_crashed"), (DEAF, "parser_timeout")])
def test_a_parser_program_that_stalls_is_bounded_by_the_timeout(
    tmp_path: Path, script: str, outcome: str
) -> None:
    parser = program(tmp_path, "parser", script)
    out = tmp_path / "run"
    started = time.monotonic()
    status = sweep(out, corpus_file(tmp_path), tmp_path / "cache", "--parser", f"cmd:{parser}",
                   "--timeout", "2", "-n", "0")
    assert status == 0 and time.monotonic() - started < 60
    stored = rows(out)
    assert len(stored) == 3 and {row["outcome"] for row in stored} == {outcome}


def test_a_parser_program_that_stops_reading_its_stdin_is_bounded(tmp_path: Path) -> None:
    parser = program(tmp_path, "parser", STOPS_READING)
    big = json.dumps({"id": "drill-big", "template": QWEN3, "thinking": True, "tools": "auto", "kwargs": {},
                      "reply": "word " * 60000, "partial": False})
    out = tmp_path / "run"
    started = time.monotonic()
    status = sweep(out, corpus_file(tmp_path, big), tmp_path / "cache", "--parser", f"cmd:{parser}",
                   "--timeout", "2", "-n", "0")
    assert status == 0 and time.monotonic() - started < 90
    stored = rows(out)
    assert len(stored) == 4 and {row["outcome"] for row in stored} == {"parser_timeout"}


@pytest.mark.parametrize(("fault", "message"), [("garbage", "not JSON"), ("wrong-id", "with the id")])
def test_an_oracle_answering_garbage_costs_one_request(
    wrapper: Path, monkeypatch: pytest.MonkeyPatch, fault: str, message: str
) -> None:
    monkeypatch.setenv("DRILL_FAULT", fault)
    monkeypatch.setenv("DRILL_OP", "parse")
    templates = binary_path().parents[2] / "llama.cpp" / "models" / "templates"
    request = {"template": QWEN3, "template_source": (templates / QWEN3).read_text(encoding="utf-8"),
               "bos": "", "eos": "", "messages": [{"role": "user", "content": "Hi"}],
               "tools": [], "tool_choice": "auto", "parallel_tool_calls": False, "enable_thinking": True,
               "reasoning_format": "deepseek", "chat_template_kwargs": {}, "add_generation_prompt": True,
               "now": "2025-06-15T10:30:00Z"}
    with Oracle(binary=wrapper, timeout=10) as oracle:
        handle = oracle.render(request).handle
        with pytest.raises(OracleCrashed, match=message):
            oracle.parse(handle, "Hello.")
        first = oracle.pid
        monkeypatch.setenv("DRILL_OP", "none")
        assert not isinstance(oracle.stream(handle, "Hello.", [3, 6]).final, Rejection)
        assert oracle.pid != first


def test_an_oracle_crash_at_render_is_counted_in_the_summary(tmp_path: Path, wrapper: Path) -> None:
    env = {"DRILL_FAULT": "abort", "DRILL_OP": "render", BINARY_ENV: str(wrapper)}
    out = tmp_path / "run"
    argv = ["--corpus", str(corpus_file(tmp_path)), "--templates", QWEN3, "--chunking", "whole",
            "--out", str(out), "--no-oracle-cache", "-n", "0"]
    done = chatparity("sweep", *argv, env=env, cwd=tmp_path)
    stored = rows(out)
    assert done.returncode == 1 and len(stored) == 3, done.stderr
    assert {row["outcome"] for row in stored} == {"oracle_crashed"}
    assert all("render" in row["error"] and "SIGABRT" in row["error"] for row in stored)
    assert "errors: oracle 3, parser 0" in done.stdout
