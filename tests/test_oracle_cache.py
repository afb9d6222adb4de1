"""The oracle's answer cache shared by worker processes."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from harness.oracle_cache import OracleCache

PROCESSES = 6
FRESH_CACHES = 100


def _open_and_store(directory: str) -> str:
    """Open the cache, store and read back one answer: '' when that worked, else the error."""
    try:
        cache = OracleCache(Path(directory))
        cache.put("key", {"answer": 1})
        found = cache.get("key")
        cache.close()
    except Exception as error:  # noqa: BLE001 - the test reports whatever the race raised
        return f"{type(error).__name__}: {error}"
    return "" if found == {"answer": 1} else f"read back {found!r}"


def test_worker_processes_opening_a_fresh_cache_at_once_all_open_it(tmp_path: Path) -> None:
    directories = [str(tmp_path / f"cache-{n}") for n in range(FRESH_CACHES)]
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        errors = [error for directory in directories
                  for error in pool.map(_open_and_store, [directory] * PROCESSES) if error]
    assert errors == []


def _store_and_exit(directory: str) -> None:
    """Store one answer and leave without closing the cache."""
    OracleCache(Path(directory)).put("left", {"answer": "kept"})


def test_stored_answers_are_written_in_batches_and_none_is_lost_at_close_or_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harness.oracle_cache.PENDING_LIMIT", 3)
    writer, reader = OracleCache(tmp_path), OracleCache(tmp_path)
    writer.put("a", {"answer": 1})
    writer.put("b", [1, 2])
    assert writer.get("a") == {"answer": 1} and reader.get("a") is None
    writer.put("c", "three")
    assert [reader.get(key) for key in "abc"] == [{"answer": 1}, [1, 2], "three"] and not writer.pending
    writer.put("d", 4)
    writer.flush()
    assert reader.get("d") == 4
    writer.put("e", 5)
    writer.close()
    assert reader.get("e") == 5
    child = multiprocessing.get_context("spawn").Process(target=_store_and_exit, args=(str(tmp_path),))
    child.start()
    child.join(60)
    assert child.exitcode == 0 and reader.get("left") == {"answer": "kept"}
    reader.close()
