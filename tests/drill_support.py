"""Shared pieces of the fault drills: a tiny corpus file, a one-template sweep, and reading what it stored."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import sweep_command

ROOT = Path(__file__).resolve().parent.parent
QWEN3 = "Qwen-Qwen3-0.6B.jinja"
GOOD_LINES = (
    {"id": "drill-thought", "template": QWEN3, "thinking": True, "tools": "auto", "kwargs": {},
     "reply": "<think>\nHi\n</think>\n\nHello there.", "partial": False},
    {"id": "drill-plain", "template": QWEN3, "thinking": True, "tools": "auto", "kwargs": {},
     "reply": "Hello.", "partial": False},
    {"id": "drill-other", "template": QWEN3, "thinking": True, "tools": "auto", "kwargs": {},
     "messages": [{"role": "user", "content": "Another question?"}], "reply": "Another answer.",
     "partial": False},
)


def corpus_file(directory: Path, *extra: str, name: str = "drill.jsonl") -> Path:
    """A corpus file of the good lines followed by `extra` raw lines."""
    path = directory / name
    lines = [json.dumps(line) for line in GOOD_LINES] + list(extra)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sweep(out: Path, corpus: Path, cache: Path, *flags: str) -> int:
    """`chatparity sweep` over one template and mode, whole replies only; its exit status."""
    argv = ["--corpus", str(corpus), "--templates", QWEN3, "--mode", "think/auto", "--chunking", "whole",
            "--out", str(out), "--oracle-cache", str(cache), *flags]
    return sweep_command.main(argv, prog="chatparity sweep")


OTHER_PARSER = ("--allow-other-parser", "--allow-pin-mismatch", "--divergences", "/dev/null")


def streamed_sweep(out: Path, corpus: Path, cache: Path, parser: str = "reply") -> None:
    """A one-template sweep of the corpus through `parser`, whole and streamed a character at a time (the full
    profile, so long replies stream too)."""
    argv = ["--profile", "full", "--corpus", str(corpus), "--templates", QWEN3, "--mode", "think/auto",
            "--chunking", "whole,char", "--out", str(out), "--oracle-cache", str(cache), "--parser", parser,
            "-n", "0"]
    sweep_command.main(argv, prog="chatparity sweep")
    assert (out / "rows.sqlite").is_file()


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file of a directory by name, as bytes."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def rows(out: Path) -> list[dict[str, Any]]:
    """The stored rows, in key order."""
    connection = sqlite3.connect(out / "rows.sqlite")
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute("SELECT * FROM rows ORDER BY case_id, chunking")]
    finally:
        connection.close()


def stamp(out: Path) -> dict[str, Any]:
    """The stored stamp."""
    connection = sqlite3.connect(out / "rows.sqlite")
    try:
        return {key: json.loads(value) for key, value in connection.execute("SELECT key, value FROM stamp")}
    finally:
        connection.close()


def chatparity(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300,
               **popen: object) -> subprocess.CompletedProcess[str]:
    """`python3 -m chatparity ARGS` in a process of its own, this checkout's modules first on its path; what it
    printed and its exit status."""
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([sys.executable, "-m", "chatparity", *args], capture_output=True, text=True,
                          env=environment, cwd=cwd, timeout=timeout, check=False, **popen)  # type: ignore[call-overload]
