"""How a chatparity process ends with the processes around it: a child ends with its parent, SIGTERM is taken
as an interruption (so every cleanup runs) and passed on to the children. Imports nothing of the project."""

from __future__ import annotations

import ctypes
import os
import signal
from pathlib import Path
from types import FrameType

PR_SET_PDEATHSIG = 1
TERMINATED: list[int] = []
"""The signal that interrupted this process, once one has."""


def end_with_parent(signum: int) -> None:
    """Have the kernel send `signum` to this process when the process that started it ends (Linux; nothing
    where prctl is missing)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    except (OSError, AttributeError):
        return


def children() -> list[int]:
    """The ids of this process's children (from /proc; none where it is missing)."""
    found = []
    for listing in Path("/proc/self/task").glob("*/children"):
        try:
            found += [int(pid) for pid in listing.read_text().split()]
        except OSError:
            continue
    return found


def interrupt_on_term(forward: bool) -> None:
    """Take SIGTERM as Ctrl-C: KeyboardInterrupt in the main thread, so `finally` blocks remove what they made
    and children are stopped; when `forward`, SIGTERM goes on to this process's children first, so they end
    as promptly."""

    def interrupted(signum: int, frame: FrameType | None) -> None:
        TERMINATED.append(signum)
        if forward:
            for pid in children():
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    continue
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
