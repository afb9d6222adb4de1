"""A finished run read back from its store: stamp, sessions and rows as pandas frames."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from chatparity.model import Row, columns
from harness.store import StoreError, open_store, read_stamp, store_file

CHUNKING_ORDER = ("whole", "char", "char2", "char3", "split")
PIN_KEYS = ("llama_cpp_commit", "template_index_hash", "profile")
SELECTION_KEYS = ("templates", "family", "mode", "corpus", "only_failing")
FETCH_ROWS = 2_000
ROW_ORDER = "case_id, chunking"


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
    def parser_spec(self) -> str:
        """The --parser spec the run was swept with (its stamp's parser in runs older than the field)."""
        return str(self.stamp.get("parser_spec") or self.stamp.get("parser") or "")

    @property
    def lost(self) -> list[str]:
        """The sweep's test items that failed, whose rows are missing from the store."""
        return [str(item) for item in self.stamp.get("lost_items") or []]

    @property
    def complete(self) -> bool:
        """Whether the run covered every template, mode and corpus of its profile (no selection)."""
        selection = self.stamp.get("selection")
        return isinstance(selection, dict) and not any(selection.get(key) for key in SELECTION_KEYS)


def shared_texts(values: tuple[Any, ...], texts: dict[str, str]) -> np.ndarray:
    """Texts (or None) with each replaced by the copy `texts` holds."""
    return np.array(list(map(texts.setdefault, values, values)), dtype=object)


def integer_series(values: np.ndarray) -> pd.Series:
    """Integers read as floats (NaN for NULL) typed as pd.read_sql types them: int64, float64 with NULLs, object
    when every value is NULL."""
    missing = np.isnan(values)
    if missing.all():
        return pd.Series([None] * len(values))
    return pd.Series(values if missing.any() else values.astype(np.int64))


def shared_frame(
    connection: sqlite3.Connection, table: str, order: str, names: Sequence[str] | None = None
) -> pd.DataFrame:
    """`SELECT * FROM table ORDER BY order` (only the columns `names` when given) as pd.read_sql gives it (its
    columns TEXT or INTEGER), each distinct text held once however many rows repeat it (a reply and its
    readings recur at every chunking), read in batches of FETCH_ROWS."""
    declared = [
        (name, kind == "INTEGER")
        for _, name, kind, *_ in connection.execute(f"PRAGMA table_info({table})")
        if names is None or name in names
    ]
    (length,) = connection.execute(f"SELECT count(*) FROM {table}").fetchone()
    selected = ", ".join(name for name, _ in declared)
    cursor = connection.execute(f"SELECT {selected} FROM {table} ORDER BY {order}")
    arrays = [np.empty(length, dtype=float if integer else object) for _, integer in declared]
    texts: dict[str, str] = {}
    start = 0
    while batch := cursor.fetchmany(FETCH_ROWS):
        stop = start + len(batch)
        for (_, integer), array, values in zip(declared, arrays, zip(*batch)):
            array[start:stop] = np.array(values, dtype=float) if integer else shared_texts(values, texts)
        start = stop
    data = {}
    for name, integer in declared:
        array = arrays.pop(0)
        data[name] = integer_series(array) if integer else pd.Series(array)
    return pd.DataFrame(data, copy=False)


def load_run(path: Path, row_columns: Sequence[str] | None = None) -> Run:
    """Read the run at `path` (a run directory or its rows.sqlite), its rows with only `row_columns` when
    given."""
    try:
        file = store_file(Path(path))
        connection = open_store(file)
    except StoreError as error:
        raise RunError(str(error)) from None
    try:
        stamp = read_stamp(connection)
        sessions = pd.read_sql("SELECT * FROM sessions ORDER BY session_id", connection)
        rows = shared_frame(connection, "rows", ROW_ORDER, row_columns)
    except (sqlite3.DatabaseError, pd.errors.DatabaseError, ValueError) as error:
        raise RunError(f"{file}: not a readable run store: {error}") from None
    finally:
        connection.close()
    missing = [name for name in row_columns or columns(Row) if name not in rows.columns]
    if missing:
        raise RunError(f"{file}: not a run store of this version, its rows lack {', '.join(missing)}")
    return Run(directory=file.parent, stamp=stamp, sessions=sessions, rows=rows)


def read_rows(run: Run, names: Sequence[str], condition: str) -> pd.DataFrame:
    """The columns `names` of the rows of the run's store that meet an SQL condition, in the order of its
    rows."""
    with closing(open_store(run.directory)) as connection:
        return pd.read_sql(
            f"SELECT {', '.join(names)} FROM rows WHERE {condition} ORDER BY {ROW_ORDER}", connection
        )


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
