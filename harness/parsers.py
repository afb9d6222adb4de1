"""Python-protocol parsers under test: a `pkg.module:factory` driven in this process, each call guarded."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from chatparity.model import (
    Message,
    ParserCrashed,
    ParserRenderFailed,
    ParserTimeout,
    ParserUnsupported,
    Reading,
    Rejection,
    Session,
    SessionReader,
    StreamRead,
    named,
    problems_of,
)
from harness.specs import import_object
from oracle.partial_reads import Reads

DEFAULT_TIMEOUT = 30.0
WATCHDOG_GRACE = 2.0
WATCHDOG_EXIT = 70

T = TypeVar("T")
A = TypeVar("A")


def described(error: BaseException) -> str:
    """An exception as `Class: message`."""
    return f"{type(error).__name__}: {error}"


class _Alarm(BaseException):
    """Raised in the main thread when a call overruns its timeout."""


class Watchdog:
    """Ends this process when a parser call outlives its deadline by WATCHDOG_GRACE seconds: a call stuck in
    C code, where SIGALRM never reaches Python. Switched on only in a sweep's worker processes, where the
    controller records the lost session and starts a fresh worker."""

    def __init__(self) -> None:
        self.enabled = False
        self.limit: float | None = None
        self.thread: threading.Thread | None = None

    def arm(self, due: float) -> None:
        """Watch a call due by `due` (time.monotonic)."""
        if not self.enabled:
            return
        self.limit = due + WATCHDOG_GRACE
        if self.thread is None:
            self.thread = threading.Thread(target=self.watch, name="parser-watchdog", daemon=True)
            self.thread.start()

    def disarm(self) -> None:
        """The call returned."""
        self.limit = None

    def watch(self) -> None:
        """Check the running call twice a second; end the process when it is overdue."""
        while True:
            time.sleep(0.5)
            limit = self.limit
            if limit is not None and time.monotonic() > limit:
                sys.stderr.write("chatparity: a parser call ignored its timeout; ending this worker\n")
                sys.stderr.flush()
                os._exit(WATCHDOG_EXIT)


WATCHDOG = Watchdog()


class Deadlines:
    """Per-call time limits from one SIGALRM timer: each call only notes when it is due; the timer, armed for a
    scope of calls (one stream), fires no later than the running call's due time and re-arms for what is left
    when it finds that call not yet overdue (main thread only)."""

    def __init__(self) -> None:
        self.due: float | None = None
        self.fires_at: float | None = None
        self.depth = 0
        self.previous: Any = None

    def ring(self, signum: int, frame: FrameType | None) -> None:
        """The timer fired: raise in the running call if it is overdue, else wait for the rest of its time."""
        self.fires_at = None
        if self.due is None:
            return
        remaining = self.due - time.monotonic()
        if remaining > 0:
            self.fires_at = self.due
            signal.setitimer(signal.ITIMER_REAL, remaining)
            return
        raise _Alarm()

    @contextmanager
    def scope(self) -> Iterator[None]:
        """The handler installed for the block (nested scopes share it); the timer stopped and the previous
        handler back after it."""
        if self.depth == 0:
            self.previous = signal.signal(signal.SIGALRM, self.ring)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                signal.setitimer(signal.ITIMER_REAL, 0)
                self.fires_at = None
                signal.signal(signal.SIGALRM, self.previous)

    def each(self, function: Callable[[A], T], items: Sequence[A], seconds: float) -> list[T]:
        """`function(item)` for each item in turn inside a scope, ParserTimeout if one runs longer than
        `seconds` from its own start."""
        outer = self.due
        out: list[T] = []
        monotonic, arm, append = time.monotonic, WATCHDOG.arm, out.append
        try:
            for item in items:
                now = monotonic()
                due = now + seconds if outer is None or now + seconds < outer else outer
                self.due = due
                if self.fires_at is None or self.fires_at > due:
                    self.fires_at = due
                    signal.setitimer(signal.ITIMER_REAL, max(due - now, 1e-6))
                arm(now + seconds)
                append(function(item))
        except _Alarm:
            raise ParserTimeout(f"no answer within {seconds:g}s") from None
        finally:
            WATCHDOG.disarm()
            self.due = outer
        return out


DEADLINES = Deadlines()


def in_main_thread() -> bool:
    """Whether this is the main thread, the only one SIGALRM reaches."""
    return threading.current_thread() is threading.main_thread()


@contextmanager
def deadline_scope() -> Iterator[None]:
    """A scope of guarded calls sharing one SIGALRM handler (nothing outside the main thread)."""
    if not in_main_thread():
        yield
        return
    with DEADLINES.scope():
        yield


def limited_each(function: Callable[[A], T], items: Sequence[A], seconds: float) -> list[T]:
    """`function(item)` for each item in turn, ParserTimeout if one runs longer than `seconds` (main thread
    only; no limit elsewhere)."""
    if seconds <= 0 or not in_main_thread():
        return [function(item) for item in items]
    if DEADLINES.depth:
        return DEADLINES.each(function, items, seconds)
    with DEADLINES.scope():
        return DEADLINES.each(function, items, seconds)


def guarded_each(function: Callable[[A], T], items: Sequence[A], timeout: float) -> list[T]:
    """Parser calls `function(item)`, one per item, each within `timeout`: a timeout becomes ParserTimeout, any
    exception but a rejection ParserCrashed (and ends the calls)."""
    try:
        return limited_each(function, items, timeout)
    except (ParserTimeout, ParserUnsupported, ParserCrashed):
        raise
    except Exception as error:
        if any(named(error, name) for name in ("Rejected", "Unsupported", "RenderFailed")):
            raise
        raise ParserCrashed(described(error)) from error


def guarded(call: Callable[[], T], timeout: float) -> T:
    """Run one parser call (`guarded_each`)."""
    return guarded_each(lambda _: call(), (None,), timeout)[0]


def read_of(call: Callable[..., Any], *args: Any, problems: bool) -> Reading:
    """The message a parser call `call(*args)` returns, or the Rejection it raised, with their problems unless
    `problems` is false. The rejection's traceback is dropped: a parser that keeps the exception it raised would
    otherwise hold its own frames, and every object they reach, in a cycle only the garbage collector frees."""
    try:
        return Message.of(call(*args), problems)
    except Exception as error:
        if named(error, "Rejected"):
            rejection = Rejection(str(error), problems_of(error) if problems else None)
            error.__traceback__ = None
            return rejection
        raise


class ReaderCalls:
    """A reader's calls: Unsupported raised by one (only opening may raise it) becomes ParserCrashed."""

    def __enter__(self) -> None:
        """Nothing to set up."""

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        """Raise an Unsupported as ParserCrashed; let anything else through."""
        if isinstance(error, Exception) and named(error, "Unsupported"):
            raise ParserCrashed(f"Unsupported raised after open: {error}") from error


READER_CALLS = ReaderCalls()


def reading(call: Callable[[], Any], timeout: float, problems: bool = True) -> Reading:
    """A guarded call's message, or the Rejection it raised, with their problems (read under the guard too)
    unless `problems` is false: a stream's snapshots, whose problems nothing judges, are read without."""
    with READER_CALLS:
        return guarded(lambda: read_of(call, problems=problems), timeout)


class StreamCalls:
    """One stream's parser calls, numbered in the order they run: open the stream (0), feed each chunk (1 to
    the chunk count), finish (one more, when the reply is finished); each keeps its reading (the snapshots
    each against the one before, `Reads`)."""

    def __init__(self, reader: Any, chunks: Sequence[str], finish: bool) -> None:
        self.reader = reader
        self.chunks = chunks
        self.finish = finish
        self.stream: Any = None
        self.snapshots = Reads()
        self.final: Reading | None = None

    def count(self) -> int:
        """How many calls the stream makes."""
        return len(self.chunks) + 1 + self.finish

    def __call__(self, index: int) -> None:
        """Make call number `index`."""
        if index == 0:
            self.stream = self.reader.stream()
        elif index <= len(self.chunks):
            last = index == len(self.chunks) and not self.finish
            self.snapshots.append(read_of(self.stream.feed, self.chunks[index - 1], problems=last))
        else:
            self.final = read_of(self.stream.finish, problems=True)

    def read(self) -> StreamRead:
        """The stream's snapshots and final reading (its last snapshot when the reply is not finished)."""
        final = self.final if self.finish else self.snapshots.last
        assert final is not None
        return StreamRead(self.snapshots, final)


class PythonReader:
    """A Python-protocol reader, each call guarded by the timeout."""

    def __init__(self, reader: Any, timeout: float) -> None:
        self.reader = reader
        self.timeout = timeout

    def parse(self, text: str, partial: bool) -> Reading:
        """The reader's whole read."""
        return reading(lambda: self.reader.parse(text, partial=partial), self.timeout)

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """Feed each chunk to a fresh stream; finish it when the reply is finished (else its last snapshot,
        read with its problems, is its final reading)."""
        calls = StreamCalls(self.reader, chunks, finish)
        with READER_CALLS:
            guarded_each(calls, range(calls.count()), self.timeout)
        return calls.read()

    def close(self) -> None:
        """Nothing to send: a Python reader is freed with its last reference."""


def git_revision(directory: Path) -> str:
    """`git describe --always --dirty` of the repository holding `directory`, or '' outside one."""
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), "describe", "--always", "--dirty", "--tags"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


class PythonParser:
    """A parser named `pkg.module:factory`, speaking the Python protocol in this process: its identity is the
    parser object's `name`, else its module and factory."""

    def __init__(self, spec: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.module, factory = import_object(spec, "parser spec")
        if not callable(factory):
            raise ValueError(  # noqa: TRY004 - a wrong spec is wrong input, a ValueError as every spec error
                f"parser spec {spec!r}: {spec.rpartition(':')[2]} is not callable")
        self.timeout = timeout
        self.parser = factory()
        own = getattr(self.parser, "name", None)
        self.name = own if isinstance(own, str) and own else f"{self.module.__name__}:{spec.rpartition(':')[2]}"

    def revision(self) -> str:
        """The module's `__version__`, else git describe of the module's repository."""
        top = importlib.import_module(self.module.__name__.split(".")[0])
        version = getattr(self.module, "__version__", None) or getattr(top, "__version__", None)
        if version:
            return str(version)
        location = getattr(self.module, "__file__", None)
        return git_revision(Path(location).parent) if location else ""

    def open(self, session: Session) -> SessionReader:
        """Open the session; an exception named Unsupported becomes ParserUnsupported."""
        try:
            return PythonReader(guarded(lambda: self.parser.open(session), self.timeout), self.timeout)
        except Exception as error:
            if named(error, "RenderFailed"):
                raise ParserRenderFailed(str(error)) from error
            if named(error, "Unsupported"):
                raise ParserUnsupported(str(error)) from error
            if named(error, "Rejected"):
                raise ParserCrashed(f"Rejected raised at open: {error}") from error
            raise

    def close(self) -> None:
        """Nothing to release."""
