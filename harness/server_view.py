"""What llama-server shows while streaming one chunking of a reply, derived from one read of every prefix.

llama-server keeps its previous message when a partial parse comes back empty, so a snapshot depends on the
stream's earlier boundaries. The oracle streams the union of every chunking's boundaries once and says which
partial parses came back empty (`kept`); a stream of fewer boundaries keeps its own last message there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence

from chatparity.model import Message, Reading, Rejection
from oracle.partial_reads import PartialReads

EMPTY = Message()


def server_stream(
    ends: Sequence[int], shown: Iterable[tuple[int, Reading]], kept: Collection[int]
) -> Iterator[Reading]:
    """The snapshots llama-server shows at `ends` (a subset of the union stream's boundaries, whose readings
    `shown` gives in order): the union stream's reading at each, except where the partial parse came back
    empty (`kept`), where this stream keeps what it showed last."""
    pairs = iter(shown)
    at = -1
    reading: Reading = EMPTY
    state: Message = EMPTY
    for end in ends:
        while at != end:
            at, reading = next(pairs)
        if isinstance(reading, Rejection):
            yield reading
            continue
        if end not in kept:
            state = reading
        yield state


class ServerStream:
    """What llama-server shows at each of a stream's `ends` (`server_stream`), read again from the union
    stream's partial reads each time it is iterated."""

    def __init__(self, ends: Sequence[int], shown: PartialReads, kept: Collection[int]) -> None:
        self.ends = ends
        self.shown = shown
        self.kept = kept

    def __iter__(self) -> Iterator[Reading]:
        """The snapshots in order, one at a time."""
        return server_stream(self.ends, self.shown.items(), self.kept)


def server_final(snapshots: Iterable[Reading], whole: Reading, partial: bool) -> Reading:
    """The reading a stream ends on: the last snapshot for a partial reply, else the finished parse
    (the last kept message when that parse is empty)."""
    if not partial and whole != EMPTY:
        return whole
    last = whole
    for reading in snapshots:
        if partial or isinstance(reading, Message):
            last = reading
    return last
