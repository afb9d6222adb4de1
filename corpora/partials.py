"""Partial replies: finished replies cut at marked points, as a max_tokens stop would cut them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from chatparity.model import Reply

ORIGIN = "partial"
CLOSING_TAG = re.compile(r"</[^<>\s]{1,40}>")


class CutPoint(str, Enum):
    """Where a reply is cut."""

    IN_MARKER = "in_marker"
    AFTER_MARKER = "after_marker"
    IN_THOUGHT = "in_thought"
    IN_CALL_MARKER = "in_call_marker"
    AFTER_CALL_MARKER = "after_call_marker"
    IN_NAME = "in_call_name"
    IN_ARGUMENTS = "in_arguments"
    PAST_ARGUMENT = "past_argument_value"
    IN_SPACE_BEFORE_CLOSING = "in_whitespace_before_closing_tag"
    IN_CLOSING = "in_closing_tag_after_whitespace"


MEANT_AT = {CutPoint.IN_THOUGHT: ("unclosed_think",), CutPoint.IN_ARGUMENTS: ("cut_off",)}


@dataclass(frozen=True)
class Landmarks:
    """The strings a reply is cut at: the template's markers, thought texts, tool names, argument values."""

    markers: tuple[str, ...]
    thoughts: tuple[str, ...]
    names: tuple[str, ...]
    values: tuple[str, ...]


def earliest(text: str, needles: tuple[str, ...], start: int = 0) -> tuple[int, str] | None:
    """The first occurrence (position, needle) of any needle at or after start, longest first on a tie."""
    found = [(at, -len(n), n) for n in needles if n and (at := text.find(n, start)) >= 0]
    if not found:
        return None
    at, _, needle = min(found)
    return at, needle


def latest(text: str, needles: tuple[str, ...]) -> tuple[int, str] | None:
    """The last occurrence (position, needle) of any needle, longest first on a tie."""
    found = [(text.rfind(n), len(n), n) for n in needles if n and n in text]
    if not found:
        return None
    at, _, needle = max(found)
    return at, needle


def middle(at: int, needle: str) -> int:
    """An offset strictly inside a needle found at a position (needles of one character have none)."""
    return at + max(1, len(needle) // 2)


def cut_points(text: str, marks: Landmarks) -> list[tuple[CutPoint, int]]:
    """Every cut point found in a reply, as (point, code-point offset), strictly inside the text."""
    points: list[tuple[CutPoint, int]] = []
    markers = tuple(m for m in marks.markers if len(m) > 1)
    marker = earliest(text, markers)
    if marker:
        points += [(CutPoint.IN_MARKER, middle(*marker)), (CutPoint.AFTER_MARKER, marker[0] + len(marker[1]))]
    thought = earliest(text, marks.thoughts)
    if thought:
        points.append((CutPoint.IN_THOUGHT, middle(*thought)))
    name = earliest(text, marks.names)
    if name:
        opening = latest(text[:name[0]], markers)
        if opening and opening != marker:
            points += [(CutPoint.IN_CALL_MARKER, middle(*opening)),
                       (CutPoint.AFTER_CALL_MARKER, opening[0] + len(opening[1]))]
        points.append((CutPoint.IN_NAME, middle(*name)))
        value = earliest(text, marks.values, name[0] + len(name[1]))
        if value:
            points.append((CutPoint.IN_ARGUMENTS, middle(*value)))
            end = value[0] + len(value[1])
            points.append((CutPoint.PAST_ARGUMENT, end + (len(text) - end) // 2))
            points += spaced_closing(text, end)
    return [(point, offset) for point, offset in points if 0 < offset < len(text)]


def spaced_closing(text: str, start: int) -> list[tuple[CutPoint, int]]:
    """Cuts inside the whitespace before the reply's last closing tag past `start` (after its first character)
    and inside that tag; none where no whitespace comes before it."""
    tags = list(CLOSING_TAG.finditer(text, start))
    if not tags:
        return []
    tag = tags[-1]
    space = len(text[:tag.start()].rstrip())
    if space == tag.start():
        return []
    return [(CutPoint.IN_SPACE_BEFORE_CLOSING, space + 1), (CutPoint.IN_CLOSING, middle(tag.start(), tag.group()))]


def partial_replies(sources: list[tuple[Reply, tuple[CutPoint, ...]]], marks: Landmarks) -> list[Reply]:
    """Each source reply cut at those of its marked points asked for, flagged partial, named source@point."""
    out: list[Reply] = []
    for source, wanted in sources:
        for point, offset in cut_points(source.text, marks):
            if point not in wanted:
                continue
            out.append(Reply(
                source.text[:offset], True, ORIGIN, f"{source.origin}:{source.shape}@{point.value}", None,
                f"cut at {offset} of {len(source.text)}", source.exempt, MEANT_AT.get(point, ()),
            ))
    return out
