"""The on-disk cache of the oracle's answers: by oracle build, render request, reply and read.

The cache only saves work: a fault in it never costs a row. A damaged file is set aside and the cache rebuilt;
one that cannot be written (a read-only directory, a full disk) is read but keeps no new answer; one that cannot
be read at all is left alone and every answer asked of llama.cpp. Each is one warning (`take_notes`)."""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import os
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any

from chatparity.files import cause_of
from chatparity.model import canonical_json

CACHE_FILE = "oracle-answers.sqlite"
LOCK_FILE = "oracle-answers.lock"
COMPANIONS = ("-wal", "-shm")
WAIT_SECONDS = 120
PENDING_LIMIT = 256
MMAP_BYTES = 1 << 30
DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
REMEDY = "name another --oracle-cache, or pass --no-oracle-cache"
NOTES: list[str] = []
"""The warnings of this process's caches not yet reported (`take_notes`)."""


def default_directory() -> Path:
    """$XDG_CACHE_HOME/chatparity/oracle-cache (~/.cache when XDG_CACHE_HOME is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chatparity" / "oracle-cache"


def take_notes() -> list[str]:
    """The warnings this process's caches gave since the last call."""
    notes = list(NOTES)
    NOTES.clear()
    return notes


def damaged(error: sqlite3.Error) -> bool:
    """Whether SQLite found the file is not a sound database."""
    return str(getattr(error, "sqlite_errorname", "")).startswith(DAMAGED)


def cause(error: Exception) -> str:
    """An error's cause in words."""
    return cause_of(error) if isinstance(error, OSError) else str(error)


class OracleCache:
    """A SQLite table of JSON answers; several worker processes may share it. Stored answers are written
    PENDING_LIMIT at a time in one transaction (and at `flush`, `close` or exit); until then this process reads
    them from memory and other processes do not see them."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / CACHE_FILE
        self.connection: sqlite3.Connection | None = None
        self.identity: tuple[int, int] | None = None
        self.writable = True
        self.pending: dict[str, bytes] = {}
        self.open()
        atexit.register(self.flush)

    def open(self) -> None:
        """Open the cache file (made when missing); a damaged one is set aside and made anew, one that cannot be
        written is opened to be read only, one that cannot be opened is left alone."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.connection = sqlite3.connect(self.path, timeout=WAIT_SECONDS, isolation_level=None)
            self.identity = file_identity(self.path)
            self._prepare()
        except (OSError, sqlite3.Error) as error:
            self.close_connection()
            if isinstance(error, sqlite3.Error) and damaged(error):
                self.set_aside(error)
            else:
                self.read_only(error)

    def _prepare(self) -> None:
        """Switch to WAL and create the table, retried while another process does the same (SQLite refuses
        a journal-mode switch at once, without waiting, when a fresh file is being set up elsewhere)."""
        assert self.connection is not None
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

    def set_aside(self, error: sqlite3.Error) -> None:
        """Move a damaged cache file (and its WAL files) aside, unless another process already has, and open
        a fresh one; one warning from the process that moved it."""
        aside = self.path.with_name(f"{CACHE_FILE}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            with open(self.path.with_name(LOCK_FILE), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if file_identity(self.path) == self.identity:
                    for suffix in COMPANIONS:
                        companion = self.path.with_name(CACHE_FILE + suffix)
                        if companion.exists():
                            companion.replace(aside.with_name(aside.name + suffix))
                    self.path.replace(aside)
                    NOTES.append(f"{self.path}: damaged ({error}); set aside as {aside.name} and rebuilt (its "
                                 "answers are asked of llama.cpp again)")
        except OSError as failure:
            self.unusable(failure)
            return
        self.open()

    def read_only(self, error: Exception) -> None:
        """A cache that cannot be written: read it when SQLite can (as a file no process changes, where its
        directory is read-only too), keeping no new answer; else use none."""
        for mode in ("ro", "ro&immutable=1"):
            try:
                self.connection = sqlite3.connect(f"file:{self.path}?mode={mode}", uri=True, isolation_level=None)
                self.connection.execute("SELECT count(*) FROM answers WHERE key = ''").fetchone()
            except sqlite3.Error:
                self.close_connection()
                continue
            self.stop_writing(error)
            return
        self.unusable(error)

    def stop_writing(self, error: Exception) -> None:
        """Keep no new answer from now on (one warning)."""
        self.writable = False
        self.pending.clear()
        NOTES.append(f"{self.path}: cannot be written ({cause(error)}); its answers are read but new ones are not "
                     f"kept: free space or make it writable, {REMEDY}")

    def unusable(self, error: Exception) -> None:
        """Use no cache from now on (one warning)."""
        self.close_connection()
        self.writable = False
        self.pending.clear()
        NOTES.append(f"{self.path}: cannot be used ({cause(error)}); every answer is asked of llama.cpp: {REMEDY}")

    def fault(self, error: sqlite3.Error) -> None:
        """What a fault met reading or writing costs: a damaged file is set aside and rebuilt, a full or
        read-only one is no longer written, anything else leaves the cache unused."""
        if damaged(error):
            self.close_connection()
            self.set_aside(error)
        elif getattr(error, "sqlite_errorname", "").startswith(("SQLITE_FULL", "SQLITE_READONLY")):
            self.stop_writing(error)
        else:
            self.unusable(error)

    @staticmethod
    def key(*parts: Any) -> str:
        """The key of an answer: a hash of everything the answer depends on."""
        return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()

    def get(self, key: str) -> Any | None:
        """The stored answer, or None."""
        data = self.pending.get(key)
        if data is None and self.connection is not None:
            try:
                row = self.connection.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as error:
                self.fault(error)
                return None
            data = row[0] if row else None
        return json.loads(zlib.decompress(data)) if data is not None else None

    def put(self, key: str, value: Any) -> None:
        """Store an answer (zlib-compressed JSON), written with the next PENDING_LIMIT or at `flush`."""
        if not self.writable:
            return
        self.pending[key] = zlib.compress(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        if len(self.pending) >= PENDING_LIMIT:
            self.flush()

    def flush(self) -> None:
        """Write the answers stored since the last flush, in one transaction."""
        if not self.pending or self.connection is None:
            return
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                self.connection.executemany(
                    "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", self.pending.items()
                )
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            self.fault(error)
            self.flush()
            return
        self.pending.clear()

    def close_connection(self) -> None:
        """Close the database connection, if open."""
        if self.connection is not None:
            try:
                self.connection.close()
            except sqlite3.Error:
                pass
            self.connection = None

    def close(self) -> None:
        """Write the pending answers and close the database."""
        try:
            self.flush()
        finally:
            atexit.unregister(self.flush)
            self.close_connection()


def file_identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` names now (device and inode), None when none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino
