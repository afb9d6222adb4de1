"""The run store: one SQLite file per run holding its stamp, sessions and rows."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

STORE_NAME = "rows.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS stamp (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    template TEXT NOT NULL,
    family TEXT NOT NULL,
    syntax TEXT NOT NULL,
    mode TEXT NOT NULL,
    thinking INTEGER NOT NULL,
    tools TEXT NOT NULL,
    kwargs TEXT NOT NULL,
    conversation TEXT NOT NULL,
    jinja_renders INTEGER NOT NULL,
    oracle_renders INTEGER NOT NULL,
    prompt_parity TEXT NOT NULL,
    oracle_format TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rows (
    case_id TEXT NOT NULL,
    chunking TEXT NOT NULL,
    session_id TEXT NOT NULL,
    template TEXT NOT NULL,
    family TEXT NOT NULL,
    syntax TEXT NOT NULL,
    mode TEXT NOT NULL,
    tools TEXT NOT NULL,
    conversation TEXT NOT NULL,
    origin TEXT NOT NULL,
    shape TEXT NOT NULL,
    partial INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    consistent INTEGER,
    monotonic INTEGER,
    clean INTEGER,
    snapshot_parity INTEGER,
    stream_detail TEXT NOT NULL,
    oracle_vs_truth TEXT,
    parser_vs_truth TEXT,
    reply TEXT NOT NULL,
    truth TEXT,
    oracle_reading TEXT,
    parser_reading TEXT,
    error TEXT NOT NULL,
    PRIMARY KEY (case_id, chunking)
);
"""

SESSION_COLUMNS = (
    "session_id", "template", "family", "syntax", "mode", "thinking", "tools", "kwargs", "conversation",
    "jinja_renders", "oracle_renders", "prompt_parity", "oracle_format", "status", "error",
)

ROW_COLUMNS = (
    "case_id", "chunking", "session_id", "template", "family", "syntax", "mode", "tools", "conversation",
    "origin", "shape", "partial", "outcome", "kind", "detail", "consistent", "monotonic", "clean",
    "snapshot_parity", "stream_detail", "oracle_vs_truth", "parser_vs_truth", "reply", "truth",
    "oracle_reading", "parser_reading", "error",
)


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


def _insert(connection: sqlite3.Connection, table: str, columns: tuple[str, ...],
            records: Iterable[Mapping[str, Any]]) -> None:
    """Insert or replace records (dicts keyed by column) into a table in one transaction."""
    marks = ", ".join("?" for _ in columns)
    sql = f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({marks})"
    with connection:
        connection.executemany(sql, [tuple(record[column] for column in columns) for record in records])


def write_sessions(connection: sqlite3.Connection, records: Iterable[Mapping[str, Any]]) -> None:
    """Store session records (dicts with SESSION_COLUMNS)."""
    _insert(connection, "sessions", SESSION_COLUMNS, records)


def write_rows(connection: sqlite3.Connection, records: Iterable[Mapping[str, Any]]) -> None:
    """Store row records (dicts with ROW_COLUMNS)."""
    _insert(connection, "rows", ROW_COLUMNS, records)
