"""Drills: a damaged, read-only or full oracle cache costs no row: a damaged one is set aside and rebuilt, one
that cannot be written is read without keeping new answers, each with one warning naming the cache."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from chatparity import cli
from harness.oracle_cache import CACHE_FILE
from tests.drill_faults import in_read_only, on_full_disk
from tests.drill_support import QWEN3, chatparity, corpus_file, rows

WARNING = "chatparity sweep: warning: "


def sweep_args(out: Path, corpus: Path, cache: Path) -> list[str]:
    """The flags of a one-template sweep of `corpus` on two workers, through the cache `cache`."""
    return ["sweep", "--corpus", str(corpus), "--templates", QWEN3, "--chunking", "whole,char", "--out", str(out),
            "--oracle-cache", str(cache), "-n", "2"]


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding every answer of the drill corpus."""
    directory = tmp_path_factory.mktemp("warm")
    assert cli.main(sweep_args(directory / "run", corpus_file(directory), directory / "cache")) == 0
    connection = sqlite3.connect(directory / "cache" / CACHE_FILE)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return directory / "cache"


def warnings(err: str) -> list[str]:
    """The warnings a sweep printed (checked to hold no traceback)."""
    assert "Traceback" not in err and "INTERNALERROR" not in err, err
    return [line[len(WARNING):] for line in err.splitlines() if line.startswith(WARNING)]


def answers(cache: Path) -> int:
    """How many answers a cache file holds."""
    connection = sqlite3.connect(cache / CACHE_FILE)
    try:
        return int(connection.execute("SELECT count(*) FROM answers").fetchone()[0])
    finally:
        connection.close()


@pytest.mark.parametrize("damage", ["garbage", "garbled"])
def test_a_damaged_cache_is_set_aside_and_rebuilt(tmp_path: Path, warm: Path, damage: str) -> None:
    cache = Path(shutil.copytree(warm, tmp_path / "cache"))
    file = cache / CACHE_FILE
    data = bytearray(file.read_bytes())
    if damage == "garbage":
        data = bytearray(b"\x13" * len(data))
    else:
        middle = len(data) // 2 // 4096 * 4096
        data[middle:middle + 8192] = b"\xff" * 8192
    file.write_bytes(bytes(data))
    done = chatparity(*sweep_args(tmp_path / "run", corpus_file(tmp_path), cache), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(rows(tmp_path / "run")) == 6
    found = warnings(done.stderr)
    assert len(found) == 1 and found[0].startswith(f"{file}: damaged (") and "set aside as" in found[0]
    aside = cache / found[0].split("set aside as ", 1)[1].split(" ", 1)[0]
    assert aside.read_bytes() == bytes(data) and answers(cache) > 0


NEW_REPLY = ('{"id": "drill-new", "template": "Qwen-Qwen3-0.6B.jinja", "thinking": true, "tools": "auto", '
             '"kwargs": {}, "reply": "A new reply.", "partial": false}')
"""A corpus line whose answers the warm cache lacks."""


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_a_cache_that_cannot_be_written_is_read_and_keeps_nothing_new(tmp_path: Path, warm: Path,
                                                                      fault: str) -> None:
    cache = Path(shutil.copytree(warm, tmp_path / "cache"))
    before = answers(cache)
    args = sweep_args(tmp_path / "run", corpus_file(tmp_path, NEW_REPLY), cache)
    done = in_read_only(cache, *args) if fault == "read-only" else on_full_disk(cache, 4096, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(rows(tmp_path / "run")) == 8
    found = warnings(done.stderr)
    cause = found[0].split("(", 1)[1].split(")")[0]
    assert found == [(f"{cache / CACHE_FILE}: cannot be written ({cause}); its answers are read but new ones are "
                      "not kept: free space or make it writable, name another --oracle-cache, or pass "
                      "--no-oracle-cache")]
    assert answers(cache) == before
