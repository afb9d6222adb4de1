"""Stream invariants of one streamed read: consistent, monotonic, clean, snapshot parity."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from chatparity.model import Message, Reading
from harness.compare import agrees, compare, excerpt, first_difference, plainly_equal
from harness.labels import StreamLabels, counts_text


@dataclass(frozen=True)
class StreamVerdict:
    """Which invariants held for a stream, the first one that broke ('' when none), how many snapshots break
    `clean` and `snapshot_parity`, and the labels of the snapshots that differ from llama-server's as the parser's
    policies or a llama.cpp defect explain them (`labels.counts_text`)."""

    consistent: bool | None
    monotonic: bool
    clean: bool
    snapshot_parity: bool | None
    detail: str = ""
    clean_breaks: int = 0
    parity_breaks: int = 0
    explained: str = ""

    def labelled(self, label: str) -> StreamVerdict:
        """The same verdict with `label` (e.g. the cut point) after its detail."""
        if not self.detail:
            return self
        return dataclasses.replace(self, detail=f"{self.detail} ({label})")


@dataclass(frozen=True)
class Breaks:
    """The snapshots of a stream that break one check: the first one described, and how many."""

    first: str | None = None
    count: int = 0

    def add(self, detail: str) -> Breaks:
        """These breaks and one more, described by `detail`."""
        return Breaks(self.first or detail, self.count + 1)


def retraction(previous: Message, current: Message) -> str | None:
    """What `current` takes back from `previous`, or None when it only extends it."""
    if current is previous:
        return None
    if (current.reasoning_content.startswith(previous.reasoning_content)
            and current.content.startswith(previous.content)
            and (not previous.tool_calls or (
                len(current.tool_calls) >= len(previous.tool_calls)
                and all(new.name.startswith(old.name) and new.arguments.startswith(old.arguments)
                        for old, new in zip(previous.tool_calls, current.tool_calls))))):
        return None
    for field in ("reasoning_content", "content"):
        before, after = getattr(previous, field), getattr(current, field)
        if not after.startswith(before):
            offset = first_difference(before, after)
            return f"{field} retracted @{offset}: {excerpt(before, offset)} -> {excerpt(after, offset)}"
    if len(current.tool_calls) < len(previous.tool_calls):
        return f"tool_calls vanished: {len(previous.tool_calls)} -> {len(current.tool_calls)}"
    for index, (before, after) in enumerate(zip(previous.tool_calls, current.tool_calls)):
        for field in ("name", "arguments"):
            old, new = getattr(before, field), getattr(after, field)
            if not new.startswith(old):
                offset = first_difference(old, new)
                return (
                    f"tool_calls[{index}].{field} retracted @{offset}: "
                    f"{excerpt(old, offset)} -> {excerpt(new, offset)}"
                )
    return None


def monotonic_break(snapshots: Iterable[Reading], ends: Sequence[int], final: Reading) -> str | None:
    """The first snapshot (or the final read) that retracts what an earlier one showed."""
    steps: Iterable[tuple[Reading, int | None]] = chain(zip(snapshots, ends), [(final, None)])
    previous: Message | None = None
    for reading, end in steps:
        if not isinstance(reading, Message):
            continue
        if previous is not None:
            found = retraction(previous, reading)
            if found:
                where = "at the final read" if end is None else f"after prefix {end}"
                return f"monotonic: {found} ({where})"
        previous = reading
    return None


@lru_cache(maxsize=4096)
def start_sizes(marker: str) -> dict[str, tuple[int, ...]]:
    """The lengths of the marker's proper starts, longest first, by the character each ends with."""
    sizes: dict[str, list[int]] = {}
    for size in range(len(marker) - 1, 0, -1):
        sizes.setdefault(marker[size - 1], []).append(size)
    return {char: tuple(found) for char, found in sizes.items()}


@lru_cache(maxsize=1024)
def marker_search(markers: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str], int]:
    """A pattern finding any of the markers, one finding a proper start of any of them ending the text, and the
    longest marker's length."""
    pattern = re.compile("|".join(re.escape(marker) for marker in markers))
    starts = sorted({marker[:size] for marker in markers for size in range(1, len(marker))}, key=len, reverse=True)
    ending = re.compile("(?:" + "|".join(map(re.escape, starts)) + r")\Z") if starts else re.compile(r"(?!)")
    return pattern, ending, max(map(len, markers))


def leak(shown: str, kept: str, markers: tuple[str, ...], checked: int = 0) -> str | None:
    """A marker in `shown`, or the start of one at its end, where the end text `kept` lacks that text at that
    offset; `shown[:checked]` is known to hold no such marker."""
    if not markers or kept.startswith(shown):
        return None
    pattern, ending, longest = marker_search(markers)
    for found in pattern.finditer(shown, max(0, checked - longest + 1)):
        if kept[found.start() : found.end()] != found.group():
            return f"marker {found.group()!r} @{found.start()}"
    if ending.search(shown, max(0, len(shown) - longest)) is None:
        return None
    last = shown[-1:]
    for marker in markers:
        for size in start_sizes(marker).get(last, ()):
            start = len(shown) - size
            if start >= 0 and shown.endswith(marker[:size]) and kept[start : len(shown)] != marker[:size]:
                return f"start of marker {marker!r} ({marker[:size]!r}) @{start}"
    return None


def end_reading(snapshots: Iterable[Reading], final: Reading) -> Message:
    """What a stream ends on: its final reading, or the last message it showed where the final is a rejection."""
    if isinstance(final, Message):
        return final
    shown = Message()
    for reading in snapshots:
        if isinstance(reading, Message):
            shown = reading
    return shown


def clean_breaks(
    snapshots: Iterable[Reading],
    ends: Sequence[int],
    final: Reading,
    markers: Sequence[str],
    views: Iterable[Reading] | None = None,
) -> Breaks:
    """The snapshots whose content or reasoning shows a template marker, or the start of one, at an offset where
    the stream's end reading lacks it; a snapshot equal to llama-server's view at the same boundary (`views`,
    one per end) shows what llama.cpp shows, which is not the parser's leak."""
    reference = end_reading(snapshots, final)
    wanted = tuple(marker for marker in dict.fromkeys(markers) if marker)
    content = reasoning = ""
    breaks = Breaks()
    shown: Iterable[Reading | None] = views if views is not None else (None for _ in ends)
    for reading, end, view in zip(snapshots, ends, shown):
        if not isinstance(reading, Message):
            continue
        found = None
        if reading.content != content:
            checked = len(content) if reading.content.startswith(content) else 0
            content = reading.content
            found = leak(content, reference.content, wanted, checked)
            found = found and f"clean: content shows {found} (after prefix {end})"
        if reading.reasoning_content != reasoning:
            checked = len(reasoning) if reading.reasoning_content.startswith(reasoning) else 0
            reasoning = reading.reasoning_content
            leaked = leak(reasoning, reference.reasoning_content, wanted, checked)
            found = found or (leaked and f"clean: reasoning_content shows {leaked} (after prefix {end})")
        if found and not (view is not None and agrees(view, reading)):
            breaks = breaks.add(found)
    return breaks


def parity_breaks(
    snapshots: Iterable[Reading],
    ends: Sequence[int],
    views: Iterable[Reading],
    labels: StreamLabels | None = None,
) -> Breaks:
    """The snapshots that differ from llama-server's view of the same prefix (`views`, one per end) where
    `labels` finds neither a policy of the parser nor a llama.cpp defect to explain the difference."""
    breaks = Breaks()
    for index, (reading, end, expected) in enumerate(zip(snapshots, ends, views)):
        if plainly_equal(expected, reading) or agrees(expected, reading):
            continue
        if labels is not None and labels.label(index, expected, reading):
            continue
        if breaks.count:
            breaks = breaks.add("")
            continue
        found = compare(expected, reading)
        if found:
            breaks = breaks.add(f"snapshot_parity: after prefix {end}: {found.detail}")
    return breaks


def check_stream(
    snapshots: Iterable[Reading],
    ends: Sequence[int],
    final: Reading,
    whole: Reading | None,
    views: Iterable[Reading] | None,
    markers: Sequence[str],
    labels: StreamLabels | None = None,
) -> StreamVerdict:
    """All four invariants of one stream; `whole` is the parser's own whole read (None if it failed); `views`
    are llama-server's snapshots at `ends` (None: llama.cpp's are unknown); `labels` explains the snapshots
    that differ from them where it can. Each check reads the snapshots and views again, one at a time."""
    inconsistent = None
    if whole is not None:
        found = compare(whole, final)
        inconsistent = (
            f"consistent: stream ends differently from the whole read: {found.detail}" if found else None
        )
    retracted = monotonic_break(snapshots, ends, final)
    leaked = clean_breaks(snapshots, ends, final, markers, views)
    unequal = parity_breaks(snapshots, ends, views, labels) if views is not None else Breaks()
    broken = [found for found in (inconsistent, retracted, leaked.first, unequal.first) if found]
    return StreamVerdict(
        consistent=None if whole is None else inconsistent is None,
        monotonic=retracted is None,
        clean=leaked.count == 0,
        snapshot_parity=None if views is None else unequal.count == 0,
        detail=broken[0] if broken else "",
        clean_breaks=leaked.count,
        parity_breaks=unequal.count,
        explained=counts_text(labels.counts) if labels is not None else "",
    )
