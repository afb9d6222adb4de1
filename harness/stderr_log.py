"""A parser program's stderr kept in a log file of bounded size, copied by a thread so the program never waits
on it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import IO

LOG_LIMIT = 1 << 20
"""The bytes of stderr a log keeps (what comes after is counted, not kept)."""


class StderrLog:
    """The stderr of every start of one parser program in this process: the first LOG_LIMIT bytes in `path`
    (created at the first byte), then how many more there were."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept = 0
        self.left_out = 0
        self.lock = threading.Lock()

    def drain(self, stream: IO[bytes]) -> None:
        """Copy `stream` (a program's stderr pipe) into the log until it ends, on a thread of its own."""
        threading.Thread(target=self.copy, args=(stream,), daemon=True).start()

    def copy(self, stream: IO[bytes]) -> None:
        """Copy `stream` into the log until it ends, then close it."""
        with stream:
            for chunk in iter(lambda: stream.read1(1 << 16), b""):  # type: ignore[attr-defined]
                self.write(chunk)

    def write(self, data: bytes) -> None:
        """Keep what fits under LOG_LIMIT, count the rest (and what the log file cannot take)."""
        with self.lock:
            room = max(LOG_LIMIT - self.kept, 0)
            kept = min(room, len(data))
            if kept:
                try:
                    with self.path.open("ab") as log:
                        log.write(data[:kept])
                except OSError:
                    kept = 0
            self.kept += kept
            self.left_out += len(data) - kept

    def close(self) -> None:
        """End the log with how much of stderr it left out, if any."""
        with self.lock:
            if self.left_out:
                try:
                    with self.path.open("ab") as log:
                        log.write(f"\n[chatparity: {self.left_out} more bytes of stderr left out]\n".encode())
                except OSError:
                    pass
                self.left_out = 0
