"""The Python protocol's streams: a snapshot's problems are never asked for (nothing judges them); a final
reading's are, and so are a cut reply's last snapshot's, its final reading; Unsupported raised by a stream is a
crash."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from chatparity.model import Message, ParserCrashed, Rejection
from harness.parsers import PythonReader


class Rejected(Exception):
    """A refusal whose problems count how often they are read."""

    def __init__(self, asked: list[str]) -> None:
        super().__init__("refused")
        self.asked = asked

    @property
    def problems(self) -> tuple[str, ...]:
        """Counted each time it is read."""
        self.asked.append("rejected")
        return ("bad_syntax",)


@dataclass
class Snapshot:
    """A message whose problems count how often they are read."""

    content: str
    asked: list[str]
    reasoning_content: str = ""
    tool_calls: tuple = field(default=())

    @property
    def problems(self) -> tuple[str, ...]:
        """Counted each time it is read."""
        self.asked.append(self.content)
        return ("no_action",)


class RefusingStart:
    """A stream that refuses its first chunk and shows the text so far after each other one."""

    def __init__(self, asked: list[str]) -> None:
        self.asked = asked
        self.text = ""

    def feed(self, chunk: str) -> Snapshot:
        """Refuse the first chunk; show the text so far after the others."""
        first = not self.text
        self.text += chunk
        if first:
            raise Rejected(self.asked)
        return Snapshot(self.text, self.asked)

    def finish(self) -> Snapshot:
        """The finished reading."""
        return Snapshot(self.text + "!", self.asked)


class Reader:
    """A reader of RefusingStart streams."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def stream(self) -> RefusingStart:
        """A fresh stream."""
        return RefusingStart(self.asked)


def test_a_finished_streams_snapshots_carry_no_problems_and_its_final_does() -> None:
    reader = Reader()
    read = PythonReader(reader, timeout=5).stream(["a", "b", "c"], finish=True)
    assert tuple(read.snapshots) == (Rejection("refused"), Message("ab"), Message("abc"))
    assert [snapshot.problems for snapshot in read.snapshots] == [None, None, None]
    assert (read.final, read.final.problems) == (Message("abc!"), ("no_action",))
    assert reader.asked == ["abc!"]


def test_a_cut_streams_last_snapshot_is_its_final_reading_with_problems() -> None:
    reader = Reader()
    read = PythonReader(reader, timeout=5).stream(["a", "b", "c"], finish=False)
    assert [snapshot.problems for snapshot in read.snapshots] == [None, None, ("no_action",)]
    last = list(read.snapshots)[-1]
    assert (read.final, read.final.problems) == (last, last.problems)
    assert reader.asked == ["abc"]
    refused = PythonReader(Reader(), timeout=5).stream(["a"], finish=False)
    assert (refused.final, refused.final.problems) == (Rejection("refused"), ("bad_syntax",))


class Unsupported(Exception):
    """What a reader may raise only when a session is opened."""


class LateUnsupported(RefusingStart):
    """A stream that raises Unsupported at its second chunk."""

    def feed(self, chunk: str) -> Snapshot:
        """Unsupported once something was fed."""
        if self.text:
            raise Unsupported("late")
        return super().feed(chunk)


class UnsupportedStreams:
    """A reader whose streams raise Unsupported, at the start or at the second chunk."""

    def __init__(self, at_start: bool) -> None:
        self.at_start = at_start

    def stream(self) -> LateUnsupported:
        """A stream, or Unsupported at once."""
        if self.at_start:
            raise Unsupported("no streams here")
        return LateUnsupported([])


def test_unsupported_raised_by_a_stream_is_a_crash_wherever_it_is_raised() -> None:
    for at_start, message in ((True, "no streams here"), (False, "late")):
        with pytest.raises(ParserCrashed, match=f"Unsupported raised after open: {message}"):
            PythonReader(UnsupportedStreams(at_start), timeout=5).stream(["a", "b", "c"], finish=True)
