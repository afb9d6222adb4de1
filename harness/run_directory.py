"""The run directory a command writes (a sweep's --out, the run `report` writes into): checked before anything
runs, held by one command at a time, cleared of what killed runs left, and removed again when a sweep that
made it stores nothing there."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import Self

from chatparity.files import FileFault, fault, remove_stale, temporary_path

BUSY = "another chatparity command is writing this run directory"


class RunDirectory:
    """A run directory held for the duration of a `with` block: made when missing, checked writable, locked
    (an advisory lock on the directory itself, released by the kernel however the holder ends, so a second
    sweep into it is refused at once), its stale temporary files removed. A FileFault names what is wrong."""

    def __init__(self, path: Path, flag: str = "--out") -> None:
        self.path = path
        self.flag = flag
        self.made: list[Path] = []
        self.handle: int | None = None

    def __enter__(self) -> Self:
        """Make, check and lock the directory."""
        if self.path.exists() and not self.path.is_dir():
            raise FileFault(self.path, "a file stands where the run directory goes",
                            f"name a directory (or a path that does not exist yet) with {self.flag}")
        self.made = [folder for folder in (self.path, *self.path.parents) if not folder.exists()]
        try:
            self.hold()
        except FileFault:
            self.__exit__(None, None, None)
            raise
        remove_stale(self.path)
        return self

    def hold(self) -> None:
        """Make the directory, check it takes a file, and lock it."""
        probe = temporary_path(self.path, "probe")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            probe.touch()
            probe.unlink()
        except OSError as error:
            raise fault(self.path, error, f"name a run directory this process can write with {self.flag}") from None
        self.handle = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FileFault(self.path, BUSY, f"wait for it to end, or name another {self.flag}") from None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Unlock; remove the directories made here that nothing went into."""
        self.release()
        for folder in self.made:
            try:
                folder.rmdir()
            except OSError:
                return

    def release(self) -> None:
        """Drop the lock."""
        if self.handle is not None:
            os.close(self.handle)
            self.handle = None
