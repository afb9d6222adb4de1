"""Parsers under test: the Python protocol, llama.cpp itself, and loading either from a `--parser` spec."""

from __future__ import annotations

import importlib
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TypeVar

from corpora.sessions import Session
from harness.chunkings import boundaries
from harness.readings import Message, Reading, Rejection
from harness.specs import import_object

DEFAULT_PARSER = "reply"
ALIASES = {"reply": "reply.harness:factory"}
DEFAULT_TIMEOUT = 30.0

T = TypeVar("T")


class ParserUnsupported(Exception):
    """The parser declined the session at open."""


class ParserCrashed(Exception):
    """The parser raised something that is not a rejection, or its process died."""


class ParserTimeout(Exception):
    """The parser did not answer one call in time."""


@dataclass(frozen=True)
class StreamRead:
    """The snapshots after each chunk of one stream, and the final reading."""

    snapshots: tuple[Reading, ...]
    final: Reading


class SessionReader(Protocol):
    """A parser opened on one session, as the harness drives it."""

    def parse(self, text: str, partial: bool) -> Reading:
        """The whole read of `text` (a Rejection when the parser refuses it)."""

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """Feed the chunks; the final reading is `finish()` when `finish`, else the last snapshot."""


class ParserUnderTest(Protocol):
    """A parser as the harness drives it: named, revisioned, opened per session."""

    name: str

    def revision(self) -> str:
        """The parser's revision for the run's stamp."""

    def open(self, session: Session) -> SessionReader:
        """A reader for the session; raises ParserUnsupported, ParserCrashed or ParserTimeout."""

    def close(self) -> None:
        """Release processes the parser holds."""


def named(error: BaseException, name: str) -> bool:
    """Whether the exception's class, or one of its bases, is called `name`."""
    return any(klass.__name__ == name for klass in type(error).__mro__)


def described(error: BaseException) -> str:
    """An exception as `Class: message`."""
    return f"{type(error).__name__}: {error}"


class _Alarm(BaseException):
    """Raised in the main thread when a call overruns its timeout."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ParserTimeout if the block runs longer than `seconds` (main thread only; no limit elsewhere)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: FrameType | None) -> None:
        raise _Alarm()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Alarm:
        raise ParserTimeout(f"no answer within {seconds:g}s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def guarded(call: Callable[[], T], timeout: float) -> T:
    """Run one parser call: a timeout becomes ParserTimeout, any exception but a rejection ParserCrashed."""
    try:
        with deadline(timeout):
            return call()
    except (ParserTimeout, ParserUnsupported, ParserCrashed):
        raise
    except Exception as error:
        if named(error, "Rejected") or named(error, "Unsupported"):
            raise
        raise ParserCrashed(described(error)) from error


def reading(call: Callable[[], Any], timeout: float) -> Reading:
    """A guarded call's message, or the Rejection it raised."""
    try:
        return Message.of(guarded(call, timeout))
    except Exception as error:
        if named(error, "Rejected"):
            return Rejection(str(error))
        if named(error, "Unsupported"):
            raise ParserCrashed(f"Unsupported raised after open: {error}") from error
        raise


class PythonReader:
    """A Python-protocol reader, each call guarded by the timeout."""

    def __init__(self, reader: Any, timeout: float) -> None:
        self.reader = reader
        self.timeout = timeout

    def parse(self, text: str, partial: bool) -> Reading:
        """The reader's whole read."""
        return reading(lambda: self.reader.parse(text, partial=partial), self.timeout)

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """Feed each chunk to a fresh stream; finish it when the reply is finished."""
        stream = guarded(self.reader.stream, self.timeout)
        snapshots = tuple(reading(partial(stream.feed, chunk), self.timeout) for chunk in chunks)
        final = reading(stream.finish, self.timeout) if finish else snapshots[-1]
        return StreamRead(snapshots, final)


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
    """A parser named `pkg.module:factory`, speaking the Python protocol in this process."""

    def __init__(self, spec: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        check_spec(spec)
        self.module, factory = import_object(spec, "parser spec")
        self.name = spec
        self.timeout = timeout
        self.parser = factory()

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
            if named(error, "Unsupported"):
                raise ParserUnsupported(str(error)) from error
            if named(error, "Rejected"):
                raise ParserCrashed(f"Rejected raised at open: {error}") from error
            raise

    def close(self) -> None:
        """Nothing to release."""


class OracleReader:
    """llama.cpp reading replies as the parser under test."""

    def __init__(self, client: Any, handle: int) -> None:
        self.client = client
        self.handle = handle

    def parse(self, text: str, partial: bool) -> Reading:
        """llama.cpp's whole read."""
        with oracle_failures():
            return self.client.parse(self.handle, text, partial=partial)

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """llama.cpp's partial read at each chunk end, as llama-server streams, in one request."""
        text = "".join(chunks)
        with oracle_failures():
            read = self.client.stream(self.handle, text, list(boundaries(chunks)))
        snapshots = tuple(read.partials)
        return StreamRead(snapshots, read.final if finish else snapshots[-1])


@contextmanager
def oracle_failures() -> Iterator[None]:
    """The oracle client's crash and timeout errors as the parser's."""
    from oracle.client import OracleCrashed, OracleTimeout

    try:
        yield
    except OracleTimeout as error:
        raise ParserTimeout(str(error)) from error
    except OracleCrashed as error:
        raise ParserCrashed(str(error)) from error


class OracleParser:
    """`oracle` or `oracle:VERSION`: llama.cpp as the parser under test, in its own child process."""

    def __init__(self, version: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        from oracle.client import Oracle
        from oracle.pins import resolve_version

        self.version = resolve_version(version)
        self.name = f"oracle:{self.version}"
        self.client = Oracle(version=self.version, timeout=timeout)

    def revision(self) -> str:
        """The llama.cpp commit and oracle build id, known without starting the child."""
        from harness.oracle_reads import OracleIdentity

        identity = OracleIdentity.of(self.version)
        return f"{identity.llama_cpp_commit}+{identity.build_id}"

    def open(self, session: Session) -> SessionReader:
        """Render the session; a template llama.cpp cannot render is unsupported."""
        from oracle.client import OracleError

        try:
            with oracle_failures():
                handle = self.client.render(session.render_request()).handle
        except OracleError as error:
            raise ParserUnsupported(f"llama.cpp cannot render the session: {error}") from error
        return OracleReader(self.client, handle)

    def close(self) -> None:
        """Stop the child process."""
        self.client.close()


def check_spec(spec: str) -> None:
    """Raise a ValueError naming what is wrong with a `--parser` spec, without starting the parser."""
    if spec == "oracle" or spec.startswith("oracle:"):
        from oracle.pins import pin_of, resolve_version

        try:
            pin_of(resolve_version(spec.partition(":")[2] or None))
        except KeyError as error:
            raise ValueError(f"parser spec {spec!r}: {error.args[0]}") from None
    elif spec.startswith("cmd:"):
        argv = shlex.split(spec[len("cmd:") :])
        if not argv or shutil.which(argv[0]) is None:
            raise ValueError(f"parser spec {spec!r}: no executable {argv[0] if argv else ''!r}")
    else:
        full = ALIASES.get(spec, spec)
        if ":" not in full:
            raise ValueError(
                f"parser spec {spec!r}: expected reply, oracle[:VERSION], cmd:COMMAND or pkg.module:factory"
            )
        _, factory = import_object(full, "parser spec")
        if not callable(factory):
            raise ValueError(f"parser spec {spec!r}: {full.rpartition(':')[2]} is not callable")


def load_parser(spec: str, timeout: float = DEFAULT_TIMEOUT) -> ParserUnderTest:
    """The parser a `--parser` spec names: reply (the project's), oracle[:VERSION], cmd:COMMAND ARGS, or
    pkg.module:factory (the module may be a path/to/file.py)."""
    if spec == "oracle" or spec.startswith("oracle:"):
        return OracleParser(spec.partition(":")[2] or None, timeout)
    if spec.startswith("cmd:"):
        from harness.command_parser import CommandParser

        return CommandParser(spec[len("cmd:") :], timeout)
    return PythonParser(ALIASES.get(spec, spec), timeout)
