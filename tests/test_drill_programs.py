"""Drills: a parser program is bounded whatever it does: children that hold its output end with it, its stderr
reaches the user in a bounded log, an answer past the size limit costs that call, and its start-up counts
against no request's timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.command_parser import ANSWER_LIMIT
from harness.stderr_log import LOG_LIMIT
from tests.drill_support import chatparity, corpus_file, rows
from tests.test_drill_children import program

ECHO = '''
import json, sys, time
{before}
for line in sys.stdin:
    request = json.loads(line)
    {each}
    op, answer = request["op"], {{}}
    if op == "open":
        answer = {{"reader": 1}}
    elif op == "parse":
        answer = {{"reading": {{"content": request["text"]}}}}
    elif op == "stream":
        text, snapshots = "", []
        for chunk in request["chunks"]:
            text += chunk
            snapshots.append({{"content": text}})
        answer = {{"snapshots": snapshots, "final": {{"content": text}}}}
    print(json.dumps({{"id": request["id"], **answer}}), flush=True)
'''
"""A parser program that reads every reply as plain content, with code run once before it reads (`before`) and
before each answer (`each`)."""
LEAVES_A_CHILD = '''
import json, subprocess, sys, time
request = json.loads(sys.stdin.readline())
print(json.dumps({"id": request["id"], "reader": 1}), flush=True)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(sys.argv[1], "a") as pids:
    print(child.pid, file=pids)
time.sleep(300)
'''
"""Opens its first reader, leaves a child holding its stdout, and answers nothing more."""


def sweep_with(tmp_path: Path, parser: str, *flags: str) -> tuple[int, str, str]:
    """A one-template sweep of the drill corpus through `parser` in a process of its own: exit status, stdout,
    stderr."""
    done = chatparity("sweep", "--corpus", str(corpus_file(tmp_path)), "--templates", "Qwen-Qwen3-0.6B.jinja",
                      "--mode", "think/auto", "--chunking", "whole", "--out", str(tmp_path / "run"),
                      "--oracle-cache", str(tmp_path / "cache"), "--parser", parser, *flags,
                      cwd=tmp_path, timeout=240)
    return done.returncode, done.stdout, done.stderr


def running(pid: int) -> bool:
    """Whether a process runs (and is not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_child_holding_the_parsers_output_ends_with_it(tmp_path: Path) -> None:
    pids = tmp_path / "children"
    parser = program(tmp_path, "parser", LEAVES_A_CHILD)
    status, out, err = sweep_with(tmp_path, f"cmd:{parser} {pids}", "--timeout", "2", "-n", "0")
    assert status == 1, out + err
    assert {row["outcome"] for row in rows(tmp_path / "run")} == {"parser_timeout"}
    children = [int(pid) for pid in pids.read_text().split()]
    assert children and not any(running(pid) for pid in children)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_parsers_stderr_is_kept_in_a_bounded_log_named_in_the_summary(tmp_path: Path, workers: str) -> None:
    noisy = ECHO.format(before="", each='sys.stderr.write(request["op"] + " " + "x" * 300000 + "\\n")')
    parser = program(tmp_path, "parser", noisy)
    status, out, err = sweep_with(tmp_path, f"cmd:{parser}", "-n", workers)
    log = tmp_path / "run" / "parser-stderr.log"
    assert status in (0, 1), out + err
    assert f"bytes to its stderr: {log}" in out
    text = log.read_text(encoding="utf-8")
    assert text.startswith(("info x", "open x")) and "more bytes of stderr left out" in text
    assert log.stat().st_size < 2 * (LOG_LIMIT + 200)


def test_an_answer_past_the_size_limit_costs_its_call(tmp_path: Path) -> None:
    huge = ECHO.format(before="", each=(
        'if request["op"] == "parse" and request["text"] == "Hello.":\n'
        f'        print(json.dumps({{"id": request["id"], "reading": {{"content": "x" * {ANSWER_LIMIT + 10}}}}}), '
        'flush=True)\n'
        '        continue'))
    parser = program(tmp_path, "parser", huge)
    status, out, err = sweep_with(tmp_path, f"cmd:{parser}", "-n", "0")
    stored = {row["reply"]: row for row in rows(tmp_path / "run")}
    assert status == 1, out + err
    assert stored["Hello."]["outcome"] == "parser_crashed"
    assert f"answer over {ANSWER_LIMIT} bytes" in stored["Hello."]["error"]
    assert {row["outcome"] for reply, row in stored.items() if reply != "Hello."} <= {"match", "mismatch"}


def test_a_slow_start_counts_against_no_request(tmp_path: Path) -> None:
    slow = ECHO.format(before="time.sleep(1.6)", each="time.sleep(0.5)")
    parser = program(tmp_path, "parser", slow)
    status, out, err = sweep_with(tmp_path, f"cmd:{parser}", "--timeout", "2", "-n", "0")
    assert status in (0, 1), out + err
    outcomes = {row["outcome"] for row in rows(tmp_path / "run")}
    assert outcomes and outcomes <= {"match", "mismatch"}
