"""Drill: the sweep process judges a long reply streamed a character at a time in memory that grows with the
reply's length, not with the sum of its snapshots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.drill_support import QWEN3, ROOT, rows

CALL = '\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "%s"}}\n</tool_call>'
LONG_REPLY = "word " * 1600 + CALL % ("word " * 1600)
SHORT_REPLY = "Hello there."
BYTES_PER_CHARACTER = 2_500
"""What the sweep process may grow by for each character of the long reply (16,000 characters, every one a
stream boundary): room for a few readings of it and a diff per snapshot, far from every snapshot whole (some
6,000 bytes per character at this length)."""


def corpus(directory: Path, reply: str) -> Path:
    """A corpus file of one reply to the weather question with tools offered."""
    path = directory / "corpus.jsonl"
    line = {"id": "drill-memory", "template": QWEN3, "thinking": False, "tools": "auto", "kwargs": {},
            "reply": reply, "partial": False}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def peak_sweep(directory: Path, reply: str) -> int:
    """The peak resident memory, in kilobytes, of a sweep process reading `reply` whole and a character at a
    time (asserting it exits 0 with every row a match)."""
    directory.mkdir()
    argv = [sys.executable, "-m", "chatparity", "sweep", "--profile", "full",
            "--corpus", str(corpus(directory, reply)), "--templates", QWEN3, "--chunking", "whole,char",
            "--out", str(directory / "run"), "--no-oracle-cache", "--timeout", "120", "-n", "0"]
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    with (directory / "output.txt").open("w", encoding="utf-8") as output:
        process = subprocess.Popen(argv, cwd=directory, env=environment, stdout=output,
                                   stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, (directory / "output.txt").read_text(encoding="utf-8")
    outcomes = {row["chunking"]: row["outcome"] for row in rows(directory / "run")}
    assert outcomes == {"whole": "match", "char": "match"}
    return usage.ru_maxrss


def test_a_long_reply_streamed_a_character_at_a_time_sweeps_in_memory_linear_in_it(tmp_path: Path) -> None:
    grown = peak_sweep(tmp_path / "long", LONG_REPLY) - peak_sweep(tmp_path / "short", SHORT_REPLY)
    assert grown * 1024 < BYTES_PER_CHARACTER * len(LONG_REPLY), f"the sweep grew by {grown} kB"
