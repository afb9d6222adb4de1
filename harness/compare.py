"""Comparing two readings: every difference, each by its field path and offset, and the kind of the first."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from chatparity.model import Kind, Message, Reading, Rejection, ToolCall, common_prefix_length
from harness.short_cache import cached_when_short

NORMALISATIONS = (
    "tool-call arguments compared as parsed JSON (as text when either side is not valid JSON)",
    "tool calls compared by position",
    "tool-call ids compared only where the oracle's reading has one",
    "two rejections agree whatever their reasons",
    "a difference that vanishes once every whitespace character is removed is of kind whitespace",
    (
        "clean: the start of a marker at the end of a snapshot is content when the parser's final "
        "reading has "
        "the same text at that offset; a whole marker in streamed content or reasoning is never clean"
    ),
)

WINDOW = 24
NAN = re.compile(r"\bNaN\b")
WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Difference:
    """How an actual reading differs from an expected one: the kind of the first difference, and all of them."""

    kind: Kind
    detail: str


def excerpt(text: str, offset: int) -> str:
    """A short quoted piece of `text` around `offset`."""
    start = max(0, offset - WINDOW // 2)
    piece = text[start : offset + WINDOW]
    return ("…" if start else "") + repr(piece) + ("…" if offset + WINDOW < len(text) else "")


def first_difference(expected: str, actual: str) -> int:
    """The first code point where two strings differ (the shorter length if one extends the other)."""
    return common_prefix_length(expected, actual)


def text_difference(path: str, expected: str, actual: str, note: str = "") -> str | None:
    """`path @OFFSET: 'expected' vs 'actual'` (OFFSET 0-based, in code points), or None when equal."""
    if expected == actual:
        return None
    offset = first_difference(expected, actual)
    return f"{path} @{offset}{note}: {excerpt(expected, offset)} vs {excerpt(actual, offset)}"


def value_difference(path: str, expected: Any, actual: Any) -> str | None:
    """Every difference between two JSON values, each named by its path, or None when equal."""
    if isinstance(expected, str) and isinstance(actual, str):
        return text_difference(path, expected, actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = [
            f"{path}.{key}: missing (expected {json.dumps(value, ensure_ascii=False)})"
            if key not in actual
            else value_difference(f"{path}.{key}", value, actual[key])
            for key, value in expected.items()
        ]
        found += [f"{path}.{key}: unexpected key" for key in actual if key not in expected]
        return "; ".join(item for item in found if item) or None
    if isinstance(expected, list) and isinstance(actual, list):
        found = [
            value_difference(f"{path}[{index}]", left, right)
            for index, (left, right) in enumerate(zip(expected, actual))
        ]
        if len(expected) != len(actual):
            found.append(f"{path}: {len(expected)} items vs {len(actual)}")
        return "; ".join(item for item in found if item) or None
    if type(expected) is not type(actual) or expected != actual:
        left, right = json.dumps(expected, ensure_ascii=False), json.dumps(actual, ensure_ascii=False)
        return f"{path}: {left} vs {right}"
    return None


def arguments_difference(path: str, expected: str, actual: str) -> str | None:
    """Arguments compared as parsed JSON, or as text when either side does not parse."""
    if expected == actual and not NAN.search(expected):
        return None
    try:
        left, right = json.loads(expected), json.loads(actual)
    except ValueError:
        return text_difference(path, expected, actual, " (as text)")
    return value_difference(path, left, right)


def call_text(call: ToolCall) -> str:
    """A call as `name(arguments)`, shortened for a report."""
    return f"{call.name}({excerpt(call.arguments, 0)})"


def calls_differences(
    expected: tuple[ToolCall, ...], actual: tuple[ToolCall, ...], ids_from: tuple[ToolCall, ...]
) -> list[str]:
    """Every difference between two lists of calls, by position; ids only where `ids_from` has one; calls
    one side lacks are named."""
    found: list[str] = []
    for index, (left, right) in enumerate(zip(expected, actual)):
        path = f"tool_calls[{index}]"
        found += [
            difference
            for difference in (
                text_difference(f"{path}.name", left.name, right.name),
                arguments_difference(f"{path}.arguments", left.arguments, right.arguments),
                text_difference(f"{path}.id", left.id, right.id)
                if index < len(ids_from) and ids_from[index].id
                else None,
            )
            if difference
        ]
    if len(expected) != len(actual):
        found.append(f"tool_calls: {len(expected)} calls vs {len(actual)}")
    found += [
        f"tool_calls[{index}] lost: {call_text(call)}"
        for index, call in enumerate(expected[len(actual) :], len(actual))
    ]
    found += [
        f"tool_calls[{index}] extra: {call_text(call)}"
        for index, call in enumerate(actual[len(expected) :], len(expected))
    ]
    return found


def calls_difference(
    expected: tuple[ToolCall, ...], actual: tuple[ToolCall, ...], ids_from: tuple[ToolCall, ...]
) -> str | None:
    """Every difference between two lists of calls, joined, or None when they agree."""
    return "; ".join(calls_differences(expected, actual, ids_from)) or None


def field_difference(path: str, expected: str, actual: str) -> str | None:
    """A text field's difference, noting text the parser lost entirely."""
    return text_difference(path, expected, actual, " (lost)" if expected and not actual else "")


def reading_text(reading: Message) -> str:
    """A message in one short line for a report."""
    parts = [
        f"{field}={excerpt(getattr(reading, field), 0)}"
        for field in ("reasoning_content", "content")
        if getattr(reading, field)
    ]
    parts += [call_text(call) for call in reading.tool_calls]
    return ", ".join(parts) or "an empty message"


def parsed_object(arguments: str) -> dict[str, Any] | str:
    """Call arguments as a JSON object, or why they are not one."""
    try:
        value = json.loads(arguments)
    except ValueError as error:
        return f"not JSON ({error})"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    return value


def plainly_equal(expected: Reading, actual: Reading) -> bool:
    """Whether two readings are equal field by field and hold no NaN argument (which never equals itself)."""
    if expected != actual:
        return False
    if isinstance(expected, Rejection):
        return True
    for call in expected.tool_calls:
        if "NaN" in call.arguments and NAN.search(call.arguments):
            return False
    return True


def compare(expected: Reading, actual: Reading, ids_from: Reading | None = None) -> Difference | None:
    """Every difference of `actual` from `expected` (kind: the first field that differs), or None when they
    agree.

    Ids are compared only where `ids_from` (by default `expected`, the oracle's reading) has one.
    """
    if plainly_equal(expected, actual):
        return None
    if isinstance(expected, Rejection) or isinstance(actual, Rejection):
        if isinstance(expected, Rejection) and isinstance(actual, Rejection):
            return None
        if isinstance(actual, Rejection):
            read = reading_text(expected)  # type: ignore[arg-type]
            return Difference(Kind.REJECTS, f"rejected: {actual.reason}; oracle read: {read}")
        read = reading_text(actual)  # type: ignore[arg-type]
        return Difference(Kind.ACCEPTS, f"oracle rejected: {expected.reason}; parser read: {read}")  # type: ignore[union-attr]
    reference = ids_from if isinstance(ids_from, Message) else expected
    found = message_differences(expected, actual, reference)
    if not found:
        return None
    detail = "; ".join(difference for _, difference in found)
    if not message_differences(without_whitespace(expected), without_whitespace(actual), reference):
        return Difference(Kind.WHITESPACE, detail)
    return Difference(found[0][0], detail)


def agrees(expected: Reading, actual: Reading) -> bool:
    """Whether `compare` finds no difference, without describing one."""
    if isinstance(expected, Rejection) or isinstance(actual, Rejection):
        return isinstance(expected, Rejection) and isinstance(actual, Rejection)
    if plainly_equal(expected, actual):
        return True
    if (expected.content != actual.content or expected.reasoning_content != actual.reasoning_content
            or len(expected.tool_calls) != len(actual.tool_calls)):
        return False
    return all(left.name == right.name and arguments_agree(left.arguments, right.arguments)
               and (not left.id or left.id == right.id)
               for left, right in zip(expected.tool_calls, actual.tool_calls))


@cached_when_short(maxsize=4096)
def arguments_agree(expected: str, actual: str) -> bool:
    """Whether `arguments_difference` finds no difference, without describing one."""
    if expected == actual and not NAN.search(expected):
        return True
    try:
        left, right = json.loads(expected), json.loads(actual)
    except ValueError:
        return expected == actual
    return same_value(left, right)


def same_value(expected: Any, actual: Any) -> bool:
    """Whether `value_difference` finds no difference between two JSON values, without describing one."""
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(same_value(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return len(expected) == len(actual) and all(map(same_value, expected, actual))
    return bool(expected == actual)


def message_differences(expected: Message, actual: Message, reference: Message) -> list[tuple[Kind, str]]:
    """Each field of two messages that differs, with its kind; call ids only where `reference` has one."""
    return [
        (kind, difference)
        for kind, difference in (
            (Kind.CONTENT, field_difference("content", expected.content, actual.content)),
            (
                Kind.REASONING,
                field_difference("reasoning_content", expected.reasoning_content, actual.reasoning_content),
            ),
            (Kind.CALLS, calls_difference(expected.tool_calls, actual.tool_calls, reference.tool_calls)),
        )
        if difference
    ]


def squeezed(value: Any) -> Any:
    """A JSON value with every whitespace character removed from its strings."""
    if isinstance(value, str):
        return WHITESPACE.sub("", value)
    if isinstance(value, dict):
        return {key: squeezed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [squeezed(item) for item in value]
    return value


def squeezed_arguments(arguments: str) -> str:
    """Call arguments with whitespace removed from their string values (from the text when not JSON)."""
    try:
        return json.dumps(squeezed(json.loads(arguments)), ensure_ascii=False)
    except ValueError:
        return WHITESPACE.sub("", arguments)


def without_whitespace(message: Message) -> Message:
    """A message with every whitespace character removed from its texts, names and argument values, so two
    readings that differ only in whitespace become equal."""
    return Message(
        content=WHITESPACE.sub("", message.content),
        reasoning_content=WHITESPACE.sub("", message.reasoning_content),
        tool_calls=tuple(
            ToolCall(WHITESPACE.sub("", call.name), squeezed_arguments(call.arguments), call.id)
            for call in message.tool_calls
        ),
    )


def calls_only(reading: Reading) -> Reading:
    """A reading with its text left out: a refusal as it is, else a message holding only its calls."""
    return reading if isinstance(reading, Rejection) else Message(tool_calls=reading.tool_calls)


def verdict(expected: Reading, actual: Reading, ids_from: Reading | None = None) -> str:
    """'match' or the mismatch kind, as the truth columns hold it."""
    found = compare(expected, actual, ids_from)
    return found.kind.value if found else "match"
