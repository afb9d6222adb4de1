"""The on-disk cache of the oracle's answers: by oracle build, render request, reply and read."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any

from chatparity.model import canonical_json

CACHE_FILE = "oracle-answers.sqlite"
WAIT_SECONDS = 120


def default_directory() -> Path:
    """$XDG_CACHE_HOME/chatparity/oracle-cache (~/.cache when XDG_CACHE_HOME is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chatparity" / "oracle-cache"


class OracleCache:
    """A SQLite table of JSON answers; several worker processes may share it."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / CACHE_FILE
        self.connection = sqlite3.connect(self.path, timeout=WAIT_SECONDS, isolation_level=None)
        self._prepare()

    def _prepare(self) -> None:
        """Switch to WAL and create the table, retried while another process does the same (SQLite refuses
        a journal-mode switch at once, without waiting, when a fresh file is being set up elsewhere)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                self.connection.execute("PRAGMA journal_mode=WAL")
                self.connection.execute("PRAGMA synchronous=NORMAL")
                self.connection.execute(
                    "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value BLOB NOT NULL)"
                )
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @staticmethod
    def key(*parts: Any) -> str:
        """The key of an answer: a hash of everything the answer depends on."""
        return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()

    def get(self, key: str) -> Any | None:
        """The stored answer, or None."""
        row = self.connection.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(zlib.decompress(row[0])) if row else None

    def put(self, key: str, value: Any) -> None:
        """Store an answer (zlib-compressed JSON)."""
        data = zlib.compress(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        self.connection.execute("INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", (key, data))

    def close(self) -> None:
        """Close the database."""
        self.connection.close()
