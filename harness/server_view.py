"""What llama-server shows while streaming one chunking of a reply, derived from one read of every prefix.

llama-server keeps its previous message when a partial parse comes back empty, so a snapshot depends on the
stream's earlier boundaries. The oracle streams the union of every chunking's boundaries once and says which
partial parses came back empty (`kept`); a stream of fewer boundaries keeps its own last message there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from chatparity.model import Message, Reading, Rejection

EMPTY = Message()


def server_stream(ends: Sequence[int], shown: Mapping[int, Reading], kept: Collection[int]) -> list[Reading]:
    """The snapshots llama-server shows at `ends` (a subset of the union stream's boundaries): the union stream's
    reading at each, except where the partial parse came back empty (`kept`), where this stream keeps what it
    showed last."""
    state: Message = EMPTY
    out: list[Reading] = []
    for end in ends:
        reading = shown[end]
        if isinstance(reading, Rejection):
            out.append(reading)
            continue
        if end not in kept:
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
