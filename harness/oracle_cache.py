"""The on-disk cache of the oracle's answers: by oracle build, render request, reply and read."""

from __future__ import annotations

import atexit
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
PENDING_LIMIT = 256
MMAP_BYTES = 1 << 30


def default_directory() -> Path:
    """$XDG_CACHE_HOME/chatparity/oracle-cache (~/.cache when XDG_CACHE_HOME is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chatparity" / "oracle-cache"


class OracleCache:
    """A SQLite table of JSON answers; several worker processes may share it. Stored answers are written
    PENDING_LIMIT at a time in one transaction (and at `flush`, `close` or exit); until then this process reads
    them from memory and other processes do not see them."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / CACHE_FILE
        self.connection = sqlite3.connect(self.path, timeout=WAIT_SECONDS, isolation_level=None)
        self.pending: dict[str, bytes] = {}
        self._prepare()
        atexit.register(self.flush)

    def _prepare(self) -> None:
        """Switch to WAL and create the table, retried while another process does the same (SQLite refuses
        a journal-mode switch at once, without waiting, when a fresh file is being set up elsewhere)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                self.connection.execute("PRAGMA journal_mode=WAL")
                self.connection.execute("PRAGMA synchronous=NORMAL")
                self.connection.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
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
        data = self.pending.get(key)
        if data is None:
            row = self.connection.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            data = row[0] if row else None
        return json.loads(zlib.decompress(data)) if data is not None else None

    def put(self, key: str, value: Any) -> None:
        """Store an answer (zlib-compressed JSON), written with the next PENDING_LIMIT or at `flush`."""
        self.pending[key] = zlib.compress(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        if len(self.pending) >= PENDING_LIMIT:
            self.flush()

    def flush(self) -> None:
        """Write the answers stored since the last flush, in one transaction."""
        if not self.pending:
            return
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            self.connection.executemany(
                "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", self.pending.items()
            )
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")
        self.pending.clear()

    def close(self) -> None:
        """Write the pending answers and close the database."""
        try:
            self.flush()
        finally:
            atexit.unregister(self.flush)
            self.connection.close()
