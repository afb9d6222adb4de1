"""The oracle's answer cache shared by worker processes."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

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
