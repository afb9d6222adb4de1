"""Comparing two readings: the first difference, its kind, its field path and offset."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.outcomes import Kind
from harness.readings import Message, Reading, Rejection, ToolCall

NORMALISATIONS = (
    "tool-call arguments compared as parsed JSON (as text when either side is not valid JSON)",
    "tool calls compared by position",
    "tool-call ids compared only where the oracle's reading has one",
    "two rejections agree whatever their reasons",
    (
        "clean: the start of a marker at the end of a snapshot is content when the parser's final "
        "reading has "
        "the same text at that offset; a whole marker in streamed content or reasoning is never clean"
    ),
)

WINDOW = 24


@dataclass(frozen=True)
class Difference:
    """The first difference between an expected and an actual reading."""

    kind: Kind
    detail: str


def excerpt(text: str, offset: int) -> str:
    """A short quoted piece of `text` around `offset`."""
    start = max(0, offset - WINDOW // 2)
    piece = text[start : offset + WINDOW]
    return ("…" if start else "") + repr(piece) + ("…" if offset + WINDOW < len(text) else "")


def first_difference(expected: str, actual: str) -> int:
    """The first code point where two strings differ (the shorter length if one extends the other)."""
    for offset, (left, right) in enumerate(zip(expected, actual)):
        if left != right:
            return offset
    return min(len(expected), len(actual))


def text_difference(path: str, expected: str, actual: str, note: str = "") -> str | None:
    """`path @OFFSET: 'expected' vs 'actual'` (OFFSET 0-based, in code points), or None when equal."""
    if expected == actual:
        return None
    offset = first_difference(expected, actual)
    return f"{path} @{offset}{note}: {excerpt(expected, offset)} vs {excerpt(actual, offset)}"


def value_difference(path: str, expected: Any, actual: Any) -> str | None:
    """The first difference between two JSON values, named by its path, or None when equal."""
    if isinstance(expected, str) and isinstance(actual, str):
        return text_difference(path, expected, actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                return f"{path}.{key}: missing (expected {json.dumps(expected[key], ensure_ascii=False)})"
            found = value_difference(f"{path}.{key}", expected[key], actual[key])
            if found:
                return found
        extra = [key for key in actual if key not in expected]
        return f"{path}.{extra[0]}: unexpected key" if extra else None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (left, right) in enumerate(zip(expected, actual)):
            found = value_difference(f"{path}[{index}]", left, right)
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path}: {len(expected)} items vs {len(actual)}"
        return None
    if type(expected) is not type(actual) or expected != actual:
        left, right = json.dumps(expected, ensure_ascii=False), json.dumps(actual, ensure_ascii=False)
        return f"{path}: {left} vs {right}"
    return None


def arguments_difference(path: str, expected: str, actual: str) -> str | None:
    """Arguments compared as parsed JSON, or as text when either side does not parse."""
    try:
        left, right = json.loads(expected), json.loads(actual)
    except ValueError:
        return text_difference(path, expected, actual, " (as text)")
    return value_difference(path, left, right)


def calls_difference(
    expected: tuple[ToolCall, ...], actual: tuple[ToolCall, ...], ids_from: tuple[ToolCall, ...]
) -> str | None:
    """The first difference between two lists of calls, by position; ids only where `ids_from` has one."""
    for index, (left, right) in enumerate(zip(expected, actual)):
        path = f"tool_calls[{index}]"
        found = text_difference(f"{path}.name", left.name, right.name) or arguments_difference(
            f"{path}.arguments", left.arguments, right.arguments
        )
        if not found and index < len(ids_from) and ids_from[index].id:
            found = text_difference(f"{path}.id", left.id, right.id)
        if found:
            return found
    if len(expected) != len(actual):
        return f"tool_calls: {len(expected)} calls vs {len(actual)}"
    return None


def compare(expected: Reading, actual: Reading, ids_from: Reading | None = None) -> Difference | None:
    """The first difference of `actual` from `expected`, or None when they agree.

    Ids are compared only where `ids_from` (by default `expected`, the oracle's reading) has one.
    """
    if isinstance(expected, Rejection) or isinstance(actual, Rejection):
        if isinstance(expected, Rejection) and isinstance(actual, Rejection):
            return None
        if isinstance(actual, Rejection):
            return Difference(Kind.REJECTS, f"rejected: {actual.reason}")
        return Difference(Kind.ACCEPTS, f"oracle rejected: {expected.reason}")  # type: ignore[union-attr]
    reference = ids_from if isinstance(ids_from, Message) else expected
    checks = (
        (Kind.CONTENT, lambda: text_difference("content", expected.content, actual.content)),
        (
            Kind.REASONING,
            lambda: text_difference(
                "reasoning_content", expected.reasoning_content, actual.reasoning_content
            ),
        ),
        (Kind.CALLS, lambda: calls_difference(expected.tool_calls, actual.tool_calls, reference.tool_calls)),
    )
    for kind, check in checks:
        found = check()
        if found:
            return Difference(kind, found)
    return None


def verdict(expected: Reading, actual: Reading, ids_from: Reading | None = None) -> str:
    """'match' or the mismatch kind, as the truth columns hold it."""
    found = compare(expected, actual, ids_from)
    return found.kind.value if found else "match"
