"""Streams of one session that share a start. llama-server's snapshot at a cut is its kept message (`server_view`),
so it depends on the text up to the cut and on the cuts before it alone: where an earlier stream of the session
read the same cuts of the same text, its reads there are this stream's too. The oracle then streams on from
the last shared cut whose read kept a message, reading that cut again: when it reads that same message there,
its kept message is the one the whole stream would have kept, so every read after it is the whole stream's.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatparity.model import Reading, common_prefix_length
from oracle.partial_reads import decoded


@dataclass(frozen=True)
class Streamed:
    """An earlier stream of the session: its reply, its cuts, and their reads as `partial_reads.encoded` wrote
    them."""

    text: str
    ends: tuple[int, ...]
    written: Sequence[Any]


@dataclass(frozen=True)
class Resume:
    """Where a stream resumes: at its cut `at`, whose read `last` is a kept message, the reads up to and with
    it known from an earlier stream (`written` as it wrote them)."""

    at: int
    written: Sequence[Any]
    last: Reading


def shared_cuts(earlier: Streamed, text: str, ends: Sequence[int]) -> int:
    """How many leading cuts of `ends` the earlier stream read at the same cuts of the same text."""
    within = bisect_right(ends, common_prefix_length(earlier.text, text))
    mine, theirs = tuple(ends[:within]), earlier.ends[:within]
    if mine == theirs:
        return within
    return next((index for index, (old, new) in enumerate(zip(theirs, mine)) if old != new), len(theirs))


def last_message(written: Sequence[Any], count: int) -> int:
    """The index below `count` of the last read `written` holds that is a message, known from the entries
    alone (0 when none after the first is): a message is a list, a rejection a dict, 0 the read before."""
    index = count - 1
    while index > 0:
        start = index
        while start > 0 and isinstance(written[start], int):
            start -= 1
        if isinstance(written[start], list):
            return index
        index = start - 1
    return 0


def resume_point(earlier: Sequence[Streamed], text: str, ends: Sequence[int]) -> Resume | None:
    """Where a stream of `text` cut at `ends` resumes from the earlier stream that shares most cuts with it; None
    where none shares a cut after the first whose read kept a message."""
    best, most = None, 1
    for streamed in earlier:
        count = shared_cuts(streamed, text, ends)
        if count > most:
            best, most = streamed, count
    if best is None:
        return None
    at = last_message(best.written, most)
    if at == 0:
        return None
    written = best.written[:at + 1]
    return Resume(at, written, decoded(written)[-1])
