"""A finished run read back from its store: stamp, sessions and rows as pandas frames."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from chatparity.model import Row, columns
from harness.store import StoreError, open_store, read_stamp, store_file

CHUNKING_ORDER = ("whole", "char", "char2", "char3", "split")
PIN_KEYS = ("llama_cpp_commit", "template_index_hash", "profile")
SELECTION_KEYS = ("templates", "family", "mode", "corpus", "only_failing")
FETCH_ROWS = 10_000


class RunError(Exception):
    """A run directory that cannot be read as a run."""


@dataclass(frozen=True)
class Run:
    """A run's directory, its stamp, its sessions and its rows."""

    directory: Path
    stamp: dict[str, Any]
    sessions: pd.DataFrame
    rows: pd.DataFrame

    @property
    def name(self) -> str:
        """The run's directory name."""
        return self.directory.name

    @property
    def lost(self) -> list[str]:
        """The sweep's test items that failed, whose rows are missing from the store."""
        return [str(item) for item in self.stamp.get("lost_items") or []]

    @property
    def complete(self) -> bool:
        """Whether the run covered every template, mode and corpus of its profile (no selection)."""
        selection = self.stamp.get("selection")
        return isinstance(selection, dict) and not any(selection.get(key) for key in SELECTION_KEYS)


def shared_frame(connection: sqlite3.Connection, query: str) -> pd.DataFrame:
    """The result of `query` as pd.read_sql gives it, each distinct text held once however many rows repeat it
    (a reply and its readings recur at every chunking), read in batches of FETCH_ROWS."""
    cursor = connection.execute(query)
    names = [description[0] for description in cursor.description]
    texts: dict[str, str] = {}
    values: list[list[Any]] = [[] for _ in names]
    while batch := cursor.fetchmany(FETCH_ROWS):
        for record in batch:
            for column, value in zip(values, record):
                column.append(texts.setdefault(value, value) if isinstance(value, str) else value)
    data = {name: pd.Series(values.pop(0)) for name in names}
    return pd.DataFrame(data, columns=names, copy=False)


def load_run(path: Path) -> Run:
    """Read the run at `path` (a run directory or its rows.sqlite)."""
    try:
        file = store_file(Path(path))
        connection = open_store(file)
    except StoreError as error:
        raise RunError(str(error)) from None
    try:
        stamp = read_stamp(connection)
        sessions = pd.read_sql("SELECT * FROM sessions ORDER BY session_id", connection)
        rows = shared_frame(connection, "SELECT * FROM rows ORDER BY case_id, chunking")
    except (sqlite3.DatabaseError, pd.errors.DatabaseError, ValueError) as error:
        raise RunError(f"{file}: not a readable run store: {error}") from None
    finally:
        connection.close()
    missing = [name for name in columns(Row) if name not in rows.columns]
    if missing:
        raise RunError(f"{file}: not a run store of this version, its rows lack {', '.join(missing)}")
    return Run(directory=file.parent, stamp=stamp, sessions=sessions, rows=rows)


def chunking_key(chunking: str) -> tuple[int, str]:
    """Sort key putting the named chunkings first in their usual order, then the rest by name."""
    if chunking in CHUNKING_ORDER:
        return (CHUNKING_ORDER.index(chunking), "")
    return (len(CHUNKING_ORDER), chunking)


def ordered_chunkings(chunkings: Any) -> list[str]:
    """The distinct chunkings of a column, in report order."""
    return sorted(set(chunkings), key=chunking_key)


def pin_differences(base: dict[str, Any], head: dict[str, Any]) -> list[str]:
    """The pinned stamp keys on which two stamps differ, each as 'key: base != head'."""
    return [
        f"{key}: {base.get(key)!r} != {head.get(key)!r}" for key in PIN_KEYS if base.get(key) != head.get(key)
    ]
