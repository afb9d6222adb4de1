"""What llama-server shows while streaming one chunking of a reply, derived from one read of every prefix.

llama-server keeps its previous message when a partial parse comes back empty, so a snapshot depends on the
stream's earlier boundaries. The oracle streams the union of every chunking's boundaries once; where that read
cannot tell an empty parse from an unchanged one, and the difference matters to a stream, the prefix's own
parse (`fresh`) decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from chatparity.model import Message, Reading, Rejection

EMPTY = Message()


def states_before(union: Sequence[int], shown: Mapping[int, Reading]) -> dict[int, Message]:
    """llama-server's kept message just before each boundary of the union stream."""
    state, before = EMPTY, {}
    for end in union:
        before[end] = state
        reading = shown[end]
        if isinstance(reading, Message):
            state = reading
    return before


def server_stream(
    ends: Sequence[int],
    shown: Mapping[int, Reading],
    before: Mapping[int, Message],
    fresh: Callable[[int], Reading],
) -> list[Reading]:
    """The snapshots llama-server shows at `ends` (a subset of the union stream's boundaries)."""
    state: Message = EMPTY
    out: list[Reading] = []
    for end in ends:
        reading = shown[end]
        if isinstance(reading, Rejection):
            out.append(reading)
            continue
        if reading != before[end] or reading == state or fresh(end) != EMPTY:
            state = reading
        out.append(state)
    return out


def server_final(snapshots: Sequence[Reading], whole: Reading, partial: bool) -> Reading:
    """The reading a stream ends on: the last snapshot for a partial reply, else the finished parse
    (the last kept message when that parse is empty)."""
    if partial:
        return snapshots[-1]
    if whole != EMPTY:
        return whole
    kept = [reading for reading in snapshots if isinstance(reading, Message)]
    return kept[-1] if kept else whole
