"""Drills: the oracle streams a long reply in bounded memory, and a stream it fails to answer costs that stream's
rows, not the session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from oracle.build import binary_path
from oracle.client import BINARY_ENV
from tests.drill_support import QWEN3, chatparity, rows, stamp
from tests.test_drill_children import ORACLE_WRAPPER, program

LONG_REPLY = "word " * 2400
MEMORY_CAP_KB = 200_000
"""The oracle's address space in the drill: room for the oracle and a step of a stream at a time, not for every
snapshot of the long reply whole."""


def long_corpus(directory: Path) -> Path:
    """A corpus file of one long reply of plain text (12,000 characters, every one of them a stream boundary)."""
    path = directory / "long.jsonl"
    line = {"id": "drill-long", "template": QWEN3, "thinking": False, "tools": "none", "kwargs": {},
            "reply": LONG_REPLY, "partial": False}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def char_sweep(tmp_path: Path, wrapper: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`chatparity sweep` of the long reply, whole and a character at a time, through the oracle `wrapper`."""
    argv = ["--profile", "full", "--corpus", str(long_corpus(tmp_path)), "--templates", QWEN3,
            "--chunking", "whole,char", "--out", str(tmp_path / "run"), "--no-oracle-cache", "--timeout", "120",
            "-n", "0"]
    return chatparity("sweep", *argv, cwd=tmp_path, env={BINARY_ENV: str(wrapper), **env}, timeout=600)


def test_a_long_reply_streams_a_character_at_a_time_within_a_memory_cap(tmp_path: Path) -> None:
    capped = tmp_path / "capped-oracle"
    capped.write_text(f"#!/bin/sh\nulimit -v {MEMORY_CAP_KB}\nexec {binary_path()}\n", encoding="utf-8")
    capped.chmod(0o755)
    done = char_sweep(tmp_path, capped)
    assert done.returncode == 0, done.stdout + done.stderr
    stored = {row["chunking"]: row for row in rows(tmp_path / "run")}
    assert {chunking: row["outcome"] for chunking, row in stored.items()} == {"whole": "match", "char": "match"}
    assert stored["char"]["snapshot_parity"] == 1


def test_a_stream_the_oracle_answers_with_an_error_costs_its_rows(tmp_path: Path) -> None:
    wrapper = program(tmp_path, "oracle-wrapper", ORACLE_WRAPPER.format(binary=str(binary_path())))
    done = char_sweep(tmp_path, wrapper, DRILL_FAULT="error", DRILL_OP="stream")
    assert done.returncode == 1, done.stdout + done.stderr
    stored = {row["chunking"]: row for row in rows(tmp_path / "run")}
    assert stored["whole"]["outcome"] == "match"
    assert stored["char"]["outcome"] == "oracle_crashed" and "std::bad_alloc" in stored["char"]["error"]
    assert stamp(tmp_path / "run")["lost_items"] == []


@pytest.mark.parametrize("size", [1, 3000])
def test_the_oracle_answers_a_stream_in_pieces_that_add_up_to_its_reads(oracle, render_upstream, size) -> None:
    rendered = render_upstream(QWEN3)
    text = "<think>" + "é" * size + "</think>" + "word " * size
    streamed = oracle.stream(rendered.handle, text, list(range(1, len(text) + 1)))
    kept = [entry for entry in streamed.written if entry != 0]
    assert sum(len(json.dumps(entry, ensure_ascii=False)) for entry in kept) < 40 * len(text)
    for cut in (1, len(text) // 2, len(text)):
        assert streamed.partials[cut - 1] == oracle.parse(rendered.handle, text[:cut], partial=True)
