"""Files the harness replaces, written whole or not at all (a temporary file beside the target, renamed over it),
their temporary files cleared after a kill, and the file faults a command reports in one line: the path, the
cause and the remedy. Imports nothing of the project."""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TEMPORARY = "chatparity-tmp-"
"""How every temporary file or directory the harness makes starts: then the id of the process that made it."""
TEMPORARY_NAME = re.compile(rf"{TEMPORARY}(\d+)-")
CAUSES = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file grew past the size this process may write",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOTDIR: "a file stands where a directory is needed",
    errno.EEXIST: "a file stands where a directory is needed",
    errno.EISDIR: "a directory stands where a file is needed",
    errno.ENOENT: "no such file or directory",
}


class FileFault(Exception):
    """A file or directory the harness cannot write or read: its path, the cause and the remedy, in one line."""

    def __init__(self, path: Path | str, cause: str, remedy: str) -> None:
        super().__init__(f"{path}: {cause}; {remedy}")
        self.path, self.cause, self.remedy = Path(path), cause, remedy


def cause_of(error: OSError) -> str:
    """An OSError's cause in words."""
    return CAUSES.get(error.errno or 0) or error.strerror or str(error)


def fault(path: Path | str, error: OSError, remedy: str) -> FileFault:
    """The FileFault of an OSError met writing or reading `path`."""
    return FileFault(path, cause_of(error), remedy)


def temporary_path(directory: Path, name: str) -> Path:
    """A temporary name in `directory` for `name`, marked with this process's id."""
    return directory / f"{TEMPORARY}{os.getpid()}-{name}"


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write the new file into: renamed over `path` when the block ends
    normally, so a reader sees the old file or the new one whole (a symlink at `path` is replaced, not
    followed); removed when the block raises, leaving `path` as it was."""
    temporary = temporary_path(path.parent, path.name)
    try:
        yield temporary
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
    except BaseException:
        remove(temporary)
        raise


def write_bytes(path: Path, data: bytes) -> Path:
    """Replace `path` with `data`, whole or not at all (`replacing`)."""
    with replacing(path) as temporary:
        temporary.write_bytes(data)
    return path


def write_text(path: Path, text: str) -> Path:
    """Replace `path` with UTF-8 `text`, whole or not at all (`replacing`)."""
    return write_bytes(path, text.encode("utf-8"))


def remove(path: Path) -> None:
    """Remove a file or directory tree if it is there (what cannot be removed is left)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def running(pid: int) -> bool:
    """Whether a process with this id runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(directory: Path) -> list[Path]:
    """Remove the temporary files and directories in `directory` whose process no longer runs (left by a kill
    that no handler saw); the ones removed."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    removed = []
    for entry in entries:
        found = TEMPORARY_NAME.match(entry.name)
        if found and not running(int(found.group(1))):
            remove(entry)
            removed.append(entry)
    return removed
