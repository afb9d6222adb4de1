"""The oracle's partial reads of a reply's prefixes as the cache keeps them: each read written as what it keeps of
the read before (the prefixes of one reply mostly lengthen the same texts), so the reads of a reply of n
characters take about n characters to store and to parse rather than n²/2. A sweep holds a stream's reads so too
(`Reads`), and reads them whole one at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from chatparity.model import (
    Message,
    Reading,
    Rejection,
    ToolCall,
    common_prefix_length,
    reading_from_json,
    reading_to_json,
)

Grown = list[Any]
"""A text as [kept, added]: the first `kept` code points of the same text in the read before, then `added`."""


def grown(before: str, after: str) -> Grown:
    """`after` as what it keeps of `before` and what it adds."""
    kept = common_prefix_length(before, after)
    return [kept, after[kept:]]


def regrown(before: str, written: Grown) -> str:
    """The text `grown` wrote, from the same text of the read before."""
    kept, added = written
    if not (isinstance(kept, int) and isinstance(added, str) and 0 <= kept <= len(before)):
        raise ValueError(f"{written!r} does not grow a text of {len(before)} code points")
    return before[:kept] + added if kept else added


def same(first: Reading, second: Reading) -> bool:
    """Whether two reads are equal, the problems they report included."""
    return type(first) is type(second) and first == second and first.problems == second.problems


def entry(before: Reading | None, reading: Reading) -> Any:
    """One read, written against the read before it: 0 when equal, a rejection as its JSON, else a message as
    [reasoning, content, calls] (and its problems where it has them), each text `grown` from the same text
    before (from nothing where the read before has none), each call as [name, arguments, id]."""
    if before is not None and same(before, reading):
        return 0
    if isinstance(reading, Rejection):
        return reading_to_json(reading)
    base = before if isinstance(before, Message) else Message()
    calls = []
    for index, call in enumerate(reading.tool_calls):
        old = base.tool_calls[index] if index < len(base.tool_calls) else ToolCall("", "")
        calls.append([grown(old.name, call.name), grown(old.arguments, call.arguments), grown(old.id, call.id)])
    written = [grown(base.reasoning_content, reading.reasoning_content), grown(base.content, reading.content), calls]
    return written if reading.problems is None else [*written, list(reading.problems)]


def encoded(readings: Sequence[Reading], before: Reading | None = None) -> list[Any]:
    """Reads in order (one per prefix), each as its `entry` against the one before (the first against
    `before`, where the reads go on from an earlier one)."""
    written: list[Any] = []
    for reading in readings:
        written.append(entry(before, reading))
        before = reading
    return written


def decoded(written: Sequence[Any]) -> list[Reading]:
    """The reads `encoded` wrote; a read equal to the one before is that same object. A ValueError names the
    first entry that does not decode."""
    return list(each_decoded(written))


def each_decoded(written: Sequence[Any]) -> Iterator[Reading]:
    """The reads `encoded` wrote, read whole one at a time (`decoded`)."""
    before: Reading | None = None
    for index, item in enumerate(written):
        try:
            before = read_entry(before, item)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise ValueError(f"partial read {index} does not decode: {type(error).__name__}: {error}") from error
        yield before


def read_entry(before: Reading | None, item: Any) -> Reading:
    """One read from its `entry` and the read before it."""
    if item == 0:
        if before is None:
            raise ValueError("the first read refers to a read before it")
        return before
    if isinstance(item, dict):
        if "rejected" not in item:
            raise ValueError(f"{item!r} is neither a rejection nor a message")
        return reading_from_json(item)
    if not isinstance(item, list) or len(item) not in (3, 4):
        raise ValueError(f"{item!r} is neither a rejection nor a message")
    reasoning, content, written, *problems = item
    base = before if isinstance(before, Message) else Message()
    calls = []
    for index, (name, arguments, call_id) in enumerate(written):
        old = base.tool_calls[index] if index < len(base.tool_calls) else ToolCall("", "")
        calls.append(ToolCall(regrown(old.name, name), regrown(old.arguments, arguments), regrown(old.id, call_id)))
    return Message(regrown(base.content, content), regrown(base.reasoning_content, reasoning), tuple(calls),
                   tuple(map(str, problems[0])) if problems else None)


class Reads:
    """Reads in order, each kept as its `entry` against the read before: where each mostly lengthens the one
    before, they take about as much memory as the last one, not all of them whole. Iterating reads them whole
    again one at a time."""

    def __init__(self, written: Sequence[Any] = (), last: Reading | None = None) -> None:
        self.written = list(written)
        self.last = last

    @classmethod
    def of_written(cls, written: Sequence[Any]) -> Reads:
        """The reads `encoded` wrote, checked to decode (a ValueError names the first entry that does not)."""
        last = None
        for last in each_decoded(written):
            pass
        return cls(written, last)

    def append(self, reading: Reading) -> None:
        """Keep one more read, after the others."""
        self.written.append(entry(self.last, reading))
        self.last = reading

    def __len__(self) -> int:
        """How many reads there are."""
        return len(self.written)

    def __iter__(self) -> Iterator[Reading]:
        """The reads in order, each read whole as it comes."""
        return each_decoded(self.written)


class PartialReads:
    """The partial reads of a reply's prefixes (`reads`), one per prefix length of `ends` (increasing)."""

    def __init__(self, ends: Sequence[int], reads: Reads) -> None:
        self.ends = tuple(ends)
        self.reads = reads

    def items(self) -> Iterator[tuple[int, Reading]]:
        """Each prefix length with its read, in order, read whole one at a time."""
        return zip(self.ends, self.reads)

    def __len__(self) -> int:
        """How many prefixes were read."""
        return len(self.ends)


def decoded_at(ends: Sequence[int], written: Sequence[Any]) -> PartialReads:
    """The reads `encoded` wrote, by the prefix length each was read at; a ValueError when they do not decode or
    their count is not that of `ends`."""
    reads = Reads.of_written(written)
    if len(reads) != len(ends):
        raise ValueError(f"{len(reads)} prefix reads cached for {len(ends)} prefixes")
    return PartialReads(ends, reads)
