"""Per-call time limits of Python-protocol parsers: each call bounded, a stream's calls sharing one timer."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

import pytest

from chatparity.model import Message, ParserTimeout
from harness.parsers import PythonReader, deadline_scope, guarded


def sleeps(seconds: float) -> Callable[[], None]:
    """A call that sleeps `seconds`."""
    return lambda: time.sleep(seconds)


def test_calls_each_within_the_limit_pass_however_long_together() -> None:
    with deadline_scope():
        started = time.monotonic()
        for _ in range(6):
            guarded(sleeps(0.1), 0.25)
    assert time.monotonic() - started >= 0.6


def test_a_call_past_the_limit_times_out_after_quick_ones_in_the_same_scope() -> None:
    with deadline_scope():
        for _ in range(1000):
            guarded(lambda: None, 0.3)
        started = time.monotonic()
        with pytest.raises(ParserTimeout, match="no answer within 0.3s"):
            guarded(sleeps(5), 0.3)
        assert 0.25 <= time.monotonic() - started < 2
        guarded(sleeps(0.2), 0.3)


def test_a_call_outside_a_scope_is_bounded_too() -> None:
    with pytest.raises(ParserTimeout):
        guarded(lambda: [time.sleep(0.02) for _ in range(100)], 0.2)


def test_the_previous_alarm_handler_is_back_and_the_timer_stopped_after_a_scope() -> None:
    def handler(signum: int, frame: object) -> None:
        """A handler of the caller's own."""

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        with deadline_scope():
            guarded(lambda: None, 30)
            assert signal.getsignal(signal.SIGALRM) is not handler
        assert signal.getsignal(signal.SIGALRM) is handler
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, previous)


class SlowStream:
    """A stream whose third chunk hangs."""

    def __init__(self) -> None:
        self.count = 0

    def feed(self, chunk: str) -> Message:
        """Sleep long on the third chunk."""
        self.count += 1
        if self.count == 3:
            time.sleep(5)
        return Message(content=chunk)

    def finish(self) -> Message:
        """The final reading."""
        return Message()


class SlowReader:
    """A reader whose streams hang on their third chunk."""

    def stream(self) -> SlowStream:
        """A fresh stream."""
        return SlowStream()


def test_a_stream_chunk_that_hangs_is_parser_timeout() -> None:
    reader = PythonReader(SlowReader(), 0.3)
    started = time.monotonic()
    with pytest.raises(ParserTimeout):
        reader.stream(["a", "b", "c", "d"], finish=True)
    assert time.monotonic() - started < 2
    assert reader.stream(["a", "b"], finish=False).final == Message(content="b")


class SteadyStream(SlowStream):
    """A stream whose every chunk takes a tenth of a second."""

    def feed(self, chunk: str) -> Message:
        """Sleep a little on every chunk."""
        time.sleep(0.1)
        return Message(content=chunk)


class SteadyReader:
    """A reader whose streams take a tenth of a second per chunk."""

    def stream(self) -> SteadyStream:
        """A fresh stream."""
        return SteadyStream()


def test_a_stream_of_chunks_each_within_the_limit_passes_however_long_together() -> None:
    started = time.monotonic()
    read = PythonReader(SteadyReader(), 0.25).stream(["a", "b", "c", "d", "e", "f"], finish=True)
    assert time.monotonic() - started >= 0.6
    assert [snapshot.content for snapshot in read.snapshots] == ["a", "b", "c", "d", "e", "f"]
