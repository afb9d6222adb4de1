"""The run store: one SQLite file per run holding its stamp, sessions and rows."""

from __future__ import annotations

import json
import operator
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from chatparity.files import temporary_path, write_text
from chatparity.model import (
    STREAM_CHECKS,
    STRUCTURAL_CHECKS,
    Record,
    Row,
    SessionRecord,
    column_defaults,
    columns,
    record_from,
    record_values,
    sql_columns,
)

STORE_NAME = "rows.sqlite"
REPORTS_INCOMPLETE = "REPORTS-INCOMPLETE.txt"
INCOMPLETE_TEXT = (
    "The report files in this directory may describe an earlier run than rows.sqlite: their writing did not end.\n"
    "`chatparity report {run}` writes them all again.\n"
)

STAMP_SCHEMA = "CREATE TABLE IF NOT EXISTS stamp (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
TABLES: dict[str, type[Record]] = {"sessions": SessionRecord, "rows": Row}
FAILING_SELECT = "SELECT case_id, chunking, session_id FROM rows WHERE outcome != 'match'"
FAILING_ORDER = " ORDER BY case_id, chunking"


def mark_reports_incomplete(run: Path) -> None:
    """Mark the report files of a run directory as not (yet) describing its store."""
    write_text(run / REPORTS_INCOMPLETE, INCOMPLETE_TEXT.format(run=run))


def mark_reports_complete(run: Path) -> None:
    """The report files of a run directory describe its store."""
    (run / REPORTS_INCOMPLETE).unlink(missing_ok=True)


class StoreError(Exception):
    """A path that holds no readable run store."""


def table_schema(table: str, record_type: type[Record]) -> str:
    """The CREATE TABLE statement of a record type: its fields as columns, its KEY as primary key."""
    lines = [f"    {name} {sql}" for name, sql in sql_columns(record_type)]
    lines.append(f"    PRIMARY KEY ({', '.join(record_type.KEY)})")
    return f"CREATE TABLE IF NOT EXISTS {table} (\n" + ",\n".join(lines) + "\n);"


SCHEMA = "\n".join([STAMP_SCHEMA, *(table_schema(table, kind) for table, kind in TABLES.items())])


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the store at `path`, a run directory or the SQLite file itself."""
    file = path / STORE_NAME if path.is_dir() or not path.suffix else path
    file.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(file)
    connection.executescript(SCHEMA)
    return connection


def write_stamp(connection: sqlite3.Connection, stamp: Mapping[str, Any]) -> None:
    """Record the run's stamp (values stored as JSON)."""
    with connection:
        connection.executemany(
            "INSERT OR REPLACE INTO stamp (key, value) VALUES (?, ?)",
            [(key, json.dumps(value, sort_keys=True)) for key, value in stamp.items()],
        )


def read_stamp(connection: sqlite3.Connection) -> dict[str, Any]:
    """The run's stamp."""
    return {key: json.loads(value) for key, value in connection.execute("SELECT key, value FROM stamp")}


def store_file(path: Path) -> Path:
    """The SQLite file of an existing run given as its directory or the file itself."""
    file = path / STORE_NAME if path.is_dir() else path
    if not file.is_file():
        raise StoreError(f"{path}: no run store here (expected {STORE_NAME} in the run directory)")
    return file


def open_store(path: Path) -> sqlite3.Connection:
    """A read-only connection to an existing run store, its tables checked."""
    file = store_file(path)
    connection = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
    try:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as error:
        connection.close()
        raise StoreError(f"{file}: not a readable run store: {error}") from None
    missing = {"stamp", *TABLES} - tables
    if missing:
        connection.close()
        raise StoreError(f"{file}: not a run store, missing tables {sorted(missing)}")
    return connection


def failing_rows(connection: sqlite3.Connection) -> tuple[tuple[str, str, str], ...]:
    """The (case_id, chunking, session_id) of the rows that are not a clean match (a store older than a check
    is read without it)."""
    present = {name for (_, name, *_) in connection.execute("PRAGMA table_info(rows)")}
    checks = [check for check in (*STREAM_CHECKS, *STRUCTURAL_CHECKS) if check in present]
    sql = FAILING_SELECT + "".join(f" OR {check} = 0" for check in checks) + FAILING_ORDER
    return tuple(connection.execute(sql))


def rows_per_chunking(connection: sqlite3.Connection) -> dict[str, int]:
    """How many rows the store holds at each chunking."""
    return dict(connection.execute("SELECT chunking, COUNT(*) FROM rows GROUP BY chunking ORDER BY chunking"))


def write_records(connection: sqlite3.Connection, records: Iterable[Record]) -> None:
    """Insert or replace records (sessions or rows, one type) in one transaction."""
    records = list(records)
    if not records:
        return
    record_type = type(records[0])
    table = next(name for name, kind in TABLES.items() if kind is record_type)
    names = columns(record_type)
    sql = f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
    with connection:
        connection.executemany(sql, [record_values(record) for record in records])


@cache
def column_names(record_type: type[Record]) -> tuple[str, ...]:
    """The store columns of a record type (asked once per type)."""
    return columns(record_type)


@cache
def column_getter(record_type: type[Record]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """What reads a mapping's values in the record type's column order."""
    return operator.itemgetter(*column_names(record_type))  # type: ignore[arg-type]


def values_of(record_type: type[Record], data: Mapping[str, Any]) -> tuple[Any, ...]:
    """A record's values in column order from a mapping of its columns; a mapping that lacks some goes through
    the record type, which fills their defaults and refuses unknown ones."""
    if data.keys() == column_defaults(record_type)[0]:  # type: ignore[arg-type]
        return column_getter(record_type)(data)  # type: ignore[arg-type]
    return record_values(record_from(record_type, data))


def spool_order(record_type: type[Record]) -> str:
    """The order a spool writes its records of one type in: by key, ties by item name and place in its payload."""
    return ", ".join([*record_type.KEY, "spool_item", "spool_position"])


class Spool:
    """Records appended as sessions finish, in a scratch SQLite file, then written to a store in key order.

    The store it writes is the same whatever order the sessions arrived in: rows are inserted sorted by
    their key, ties kept in the order of their session's item name and their place in its payload.
    """

    def __init__(self) -> None:
        handle, name = tempfile.mkstemp(prefix=temporary_path(Path(), "spool-").name, suffix=".sqlite")
        os.close(handle)
        self.file = Path(name)
        self.connection = sqlite3.connect(self.file)
        self.connection.execute("PRAGMA journal_mode=OFF")
        self.connection.execute("PRAGMA synchronous=OFF")
        for table, kind in TABLES.items():
            names = ", ".join(columns(kind))
            self.connection.execute(f"CREATE TABLE {table} (spool_item, spool_position, {names})")
        self.count = 0
        self.rows = 0

    def add(self, item: str, record_type: type[Record], found: Iterable[Mapping[str, Any]]) -> None:
        """Append one item's records of one type, each given as a mapping of its columns."""
        table = next(name for name, kind in TABLES.items() if kind is record_type)
        names = column_names(record_type)  # type: ignore[arg-type]
        marks = ", ".join("?" for _ in range(len(names) + 2))
        sql = f"INSERT INTO {table} (spool_item, spool_position, {', '.join(names)}) VALUES ({marks})"
        values = [(item, position, *values_of(record_type, data)) for position, data in enumerate(found)]
        if not values:
            return
        with self.connection:
            self.connection.executemany(sql, values)
        self.count += 1
        self.rows += len(values) if record_type is Row else 0

    def write(self, connection: sqlite3.Connection) -> None:
        """Insert every spooled record into the store `connection` (its schema made), in key order: read
        through an index of the spool in that order, so only the keys are sorted, not the records."""
        for table, kind in TABLES.items():
            self.connection.execute(f"CREATE INDEX IF NOT EXISTS {table}_order ON {table} ({spool_order(kind)})")
        connection.execute("ATTACH DATABASE ? AS spool", (str(self.file),))
        try:
            with connection:
                for table, kind in TABLES.items():
                    names = ", ".join(columns(kind))
                    order = spool_order(kind)
                    connection.execute(
                        f"INSERT OR REPLACE INTO main.{table} ({names}) "
                        f"SELECT {names} FROM spool.{table} ORDER BY {order}"
                    )
        finally:
            connection.execute("DETACH DATABASE spool")

    def close(self) -> None:
        """Drop the scratch file."""
        self.connection.close()
        self.file.unlink(missing_ok=True)
