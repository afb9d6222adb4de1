"""Labels for a difference between llama.cpp's reading and the parser's: the parser's policies that predict it, or
the llama.cpp defect that makes llama.cpp's side wrong there; no label is a parser bug.

Snapshots are labelled with what llama-server showed at each boundary of the stream (`StreamLabels`), finished
readings with llama.cpp's whole read and what its stream showed last (`final_label`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from chatparity.model import Message, Reading
from harness.compare import agrees
from harness.policies import Policies
from harness.policy_rules import Point, takes_back

EMPTY = Message()
DEFECT = "llama.cpp:"
STALE_VIEW = DEFECT + "stale_view"
RETRACTION = DEFECT + "retraction"
EMPTY_READ = DEFECT + "empty_read"
DEPARTS_FROM_TRUTH = DEFECT + "departs_from_truth"
DROPS_DECLARED_CALL = DEFECT + "drops_declared_call"
DEFECT_REASONS = {
    STALE_VIEW: "llama.cpp's partial parse of this prefix comes back empty after an earlier prefix showed "
                "something, so llama-server keeps showing what it showed last, which depends on the chunks",
    RETRACTION: "llama.cpp's stream takes back what it showed earlier (text, a call, or arguments), which "
                "llama-server cannot send as a diff",
    EMPTY_READ: "llama.cpp reads the reply as an empty message although its stream showed something",
    DEPARTS_FROM_TRUTH: "llama.cpp reads the reply otherwise than the message it was written to mean (its truth), "
                        "which the parser reads",
    DROPS_DECLARED_CALL: "llama.cpp reads a finished reply as an empty message although it calls, by name, a tool "
                         "the request declares; the parser reads that call",
}


def is_defect(label: str) -> bool:
    """Whether a label names a llama.cpp defect rather than the parser's policies."""
    return label.startswith(DEFECT)


def policy_label(names: tuple[str, ...]) -> str:
    """The label of a difference the named policies predict together."""
    return "+".join(names)


class CharHistory(Protocol):
    """What llama.cpp's stream of the whole reply, one character at a time, showed before a prefix."""

    def shown_before(self, end: int) -> bool:
        """Whether it showed something before prefix `end`."""

    def taken_back_before(self, end: int, reading: Message) -> bool:
        """Whether it took something back before prefix `end`, having shown what `reading` lacks."""


@dataclass
class StreamLabels:
    """The labels of one stream's snapshots that differ from llama-server's: `views` are what llama-server showed
    at each of `ends` (read once, where a retraction is asked about), `kept` the prefixes whose partial parse
    came back empty (llama-server then keeps what it showed before), and `history` what llama.cpp's stream of
    every character showed before a prefix."""

    text: str
    ends: Sequence[int]
    views: Iterable[Reading]
    kept: Collection[int]
    history: CharHistory
    policies: Policies
    markers: tuple[str, ...]
    retracting: list[bool] | None = field(default=None, init=False)
    counts: Counter[str] = field(default_factory=Counter, init=False)

    def label(self, index: int, expected: Reading, actual: Reading) -> str | None:
        """The label of the difference at snapshot `index`, counted (None: a parser bug)."""
        point = Point(self.text[: self.ends[index]], True, self.markers)
        names = self.policies.explain(expected, actual, point)
        found = policy_label(names) if names else self.defect(index, expected)
        if found:
            self.counts[found] += 1
        return found

    def defect(self, index: int, expected: Reading) -> str | None:
        """The llama.cpp defect of llama-server's view at snapshot `index`, if it has one."""
        end = self.ends[index]
        if not isinstance(expected, Message):
            return None
        if end in self.kept and (expected != EMPTY or self.history.shown_before(end)):
            return STALE_VIEW
        return RETRACTION if self.retracted(index) or self.history.taken_back_before(end, expected) else None

    def retracted(self, index: int) -> bool:
        """Whether the view at `index` lacks something a view before it showed."""
        if self.retracting is None:
            self.retracting = retractions(self.views)
        return self.retracting[index]


def retractions(views: Iterable[Reading]) -> list[bool]:
    """Per view, whether it takes back what the view before the stream's first retraction showed."""
    peak: Message | None = None
    before: Message | None = None
    found = []
    for view in views:
        if not isinstance(view, Message):
            found.append(False)
            continue
        if peak is None and before is not None and takes_back(before, view):
            peak = before
        found.append(peak is not None and takes_back(peak, view))
        before = view
    return found


def first_shown(views: Iterable[tuple[int, Reading]]) -> int | None:
    """The shortest prefix at which llama-server's views (prefix end, view) show something (None: none
    does)."""
    return min((end for end, view in views if isinstance(view, Message) and view != EMPTY), default=None)


def first_retraction(views: Iterable[tuple[int, Reading]]) -> tuple[int, Message] | None:
    """Where a stream of views (prefix end, view) first takes back what it showed and the view it takes back
    from (None: it never does, or meets a rejection first)."""
    before: Message | None = None
    for end, view in views:
        if not isinstance(view, Message):
            return None
        if before is not None and takes_back(before, view):
            return end, before
        before = view
    return None


def shown_last(views: Iterable[Reading]) -> Message | None:
    """What a stream of views showed last before it first took anything back (None where it ends on a
    rejection)."""
    before: Message | None = None
    for view in views:
        if not isinstance(view, Message):
            return None
        if before is not None and takes_back(before, view):
            return before
        before = view
    return before


def final_label(
    readings: Sequence[Reading], actual: Reading, point: Point, policies: Policies, stale: Callable[[], bool],
    known: str = "", truth: Message | None = None, declared: frozenset[str] = frozenset(),
) -> str | None:
    """The label of a difference between llama.cpp's reading of a whole reply and the parser's (None: a parser
    bug): the parser's policies that predict it, else the known divergence `known` that selects the row, else the
    llama.cpp defect behind it (where the reply's `truth` is known, the parser reading it and llama.cpp not is
    one; so is reading nothing at all of a finished reply that calls a `declared` tool by name). `readings` are
    llama.cpp's: what llama-server's stream ended on, then llama.cpp's own read of the whole reply where that
    differs; `stale()` tells whether the first is a stale view llama-server kept."""
    for expected in readings:
        names = policies.explain(expected, actual, point)
        if names:
            return policy_label(names)
    if known:
        return known
    shown = point.stream_end
    for expected in readings:
        if isinstance(expected, Message) and shown is not None and shown != EMPTY:
            if expected == EMPTY:
                return EMPTY_READ
            if takes_back(shown, expected):
                return RETRACTION
    ended = readings[0]
    if isinstance(ended, Message) and ended != EMPTY and stale():
        return STALE_VIEW
    if truth is not None and agrees(truth, actual) and not any(agrees(truth, expected) for expected in readings):
        return DEPARTS_FROM_TRUTH
    if not point.cut and all(expected == EMPTY for expected in readings) and calls_declared(actual, point, declared):
        return DROPS_DECLARED_CALL
    return None


def calls_declared(reading: Reading, point: Point, declared: frozenset[str]) -> bool:
    """Whether a reading holds calls, each to a `declared` tool whose name the reply writes."""
    calls = reading.tool_calls if isinstance(reading, Message) else ()
    return bool(calls) and all(call.name in declared and call.name in point.text for call in calls)


def counts_text(counts: Counter[str]) -> str:
    """Label counts as a store column holds them: 'held_arguments=12,llama.cpp:stale_view=3', most first."""
    return ",".join(f"{label}={count}" for label, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def counts_of(text: str) -> Counter[str]:
    """The label counts `counts_text` wrote."""
    found: Counter[str] = Counter()
    for item in text.split(",") if text else ():
        label, _, count = item.rpartition("=")
        found[label] += int(count)
    return found
