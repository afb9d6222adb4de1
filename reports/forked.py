"""Two jobs at once: one in a forked child process, one in this one (report files written on both cores)."""

from __future__ import annotations

import multiprocessing
import signal
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TypeVar

from chatparity.processes import end_with_parent

T = TypeVar("T")
U = TypeVar("U")


class ForkedJobError(RuntimeError):
    """The job run in the forked child failed or the child died; the message holds its traceback."""


def fork_is_safe() -> bool:
    """Whether this process can fork a child that runs Python: fork exists and no other thread runs (a lock
    another thread holds would stay held in the child)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _run_child(job: Callable[[], U], sender: Connection) -> None:
    """The child's side (ended by the kernel should its parent end first): send the job's result, the OSError
    that stopped it (a full disk, raised as such in the parent), or the traceback of its failure."""
    end_with_parent(signal.SIGKILL)
    outcome: tuple[str, object]
    try:
        outcome = ("done", job())
    except OSError as error:
        outcome = ("os", error)
    except BaseException:  # noqa: BLE001 - whatever ends the job is sent to the parent, which raises it
        outcome = ("failed", traceback.format_exc())
    sender.send(outcome)
    sender.close()


def both(here: Callable[[], T], there: Callable[[], U]) -> tuple[T, U]:
    """`here()` in this process while `there()` runs in a forked child; their results. Where forking is not
    safe (`fork_is_safe`) the two run one after the other here. ForkedJobError when the child's job fails or
    the child dies."""
    if not fork_is_safe():
        return here(), there()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run_child, args=(there, sender), name="chatparity-forked-job")
    child.start()
    sender.close()
    try:
        mine = here()
        try:
            kind, value = receiver.recv()
        except EOFError:
            kind, value = "died", None
    except BaseException:
        child.kill()
        raise
    finally:
        receiver.close()
        child.join()
    if kind == "died":
        raise ForkedJobError(f"the forked child ended (exit code {child.exitcode}) before its job did")
    if kind == "os":
        raise value
    if kind == "failed":
        raise ForkedJobError(f"the forked child's job failed:\n{value}")
    return mine, value
