"""The rules a parser's policies name: each predicts how a parser following it departs from llama.cpp's reading.

A rule takes llama.cpp's reading, the parser's and what is known of the point read (`Point`), and returns
llama.cpp's reading changed as far as the rule predicts towards the parser's (None where it predicts nothing).
A difference is a policy's when the rules its parser declares turn llama.cpp's reading into the parser's.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

from chatparity.model import Message, ToolCall
from harness.json_prefix import closed, escaped_controls, held, is_object

TEXT_FIELDS = ("reasoning_content", "content")
DECIDING_WORD = re.compile(r"[\w .=:-]{1,32}")
"""What may follow a whole marker in held text while the next characters decide what it opens: a header still
arriving on its line, such as gpt-oss's `<|channel|>commentary ` before its `<|message|>`."""


@dataclass(frozen=True)
class Point:
    """Where a reading was taken: the reply's text so far, whether more of it may follow (a snapshot, or a cut
    reply), the markers of the template and request (thinking tags, call starts, special tokens), and, for a
    reading of the whole reply, what llama.cpp's character-by-character stream of it showed last before it first
    took anything back (None where unknown)."""

    text: str
    cut: bool
    markers: tuple[str, ...]
    stream_end: Message | None = None


Rule = Callable[[Message, Message, Point], Message | None]


def with_calls(message: Message, calls: list[ToolCall]) -> Message:
    """The message with other tool calls."""
    return dataclasses.replace(message, tool_calls=tuple(calls))


def changed_arguments(expected: Message, actual: Message, predict: Callable[[str], str]) -> Message | None:
    """llama.cpp's reading with each call's arguments replaced by `predict` of them where the parser's call of the
    same name and position shows other arguments."""
    calls = list(expected.tool_calls)
    for index, (mine, theirs) in enumerate(zip(expected.tool_calls, actual.tool_calls)):
        if mine.name == theirs.name and mine.arguments != theirs.arguments:
            calls[index] = dataclasses.replace(mine, arguments=predict(mine.arguments))
    return with_calls(expected, calls) if calls != list(expected.tool_calls) else None


def held_marker_start(expected: Message, actual: Message, point: Point) -> Message | None:
    """While text may still arrive, the parser holds back text at the end of content or reasoning that starts a
    marker still arriving (a thinking tag, a call start such as `<tool_call>` or `>>>`, a special token), or a
    whole marker whose meaning the next characters decide; llama.cpp shows it as text."""
    if not point.cut:
        return None
    changes = {}
    for name in TEXT_FIELDS:
        mine, theirs = getattr(expected, name), getattr(actual, name)
        if mine != theirs and mine.startswith(theirs) and holds_marker_start(mine[len(theirs):], point):
            changes[name] = theirs
    return dataclasses.replace(expected, **changes) if changes else None


def finished_text_kept(expected: Message, actual: Message, point: Point) -> Message | None:
    """A finished reply is read to its last character: text at its end that starts a marker is content, where
    llama.cpp drops it."""
    if point.cut:
        return None
    changes = {}
    for name in TEXT_FIELDS:
        mine, theirs = getattr(expected, name), getattr(actual, name)
        tail = theirs[len(mine):]
        if tail and theirs.startswith(mine) and point.text.endswith(tail) and starts_a_marker(tail, point):
            changes[name] = theirs
    return dataclasses.replace(expected, **changes) if changes else None


def starts_a_marker(text: str, point: Point) -> bool:
    """Whether the text is a proper start of one of the point's markers."""
    return any(len(text) < len(marker) and marker.startswith(text) for marker in point.markers)


def holds_marker_start(tail: str, point: Point) -> bool:
    """Whether `tail` begins a suffix of the text so far that is a marker or the start of one, or is a whole
    marker followed by a header still arriving on its line that decides what it opens (`<|channel|>com`)."""
    text = point.text
    for marker in point.markers:
        if tail.startswith(marker) and text.endswith(tail) and DECIDING_WORD.fullmatch(tail, len(marker)):
            return True
        for size in range(min(len(marker), len(text)), 0, -1):
            suffix = text[len(text) - size:]
            if marker.startswith(suffix) and suffix.startswith(tail):
                return True
    return False


def held_arguments(expected: Message, actual: Message, point: Point) -> Message | None:
    """While text may still arrive, the parser shows a call's arguments only up to their last closable point (a
    prefix that becomes a JSON object once its open string and brackets are closed), control characters
    escaped; llama.cpp shows them as far as they have arrived."""
    if not point.cut:
        return None
    return changed_arguments(expected, actual, held)


def escaped_control_characters(expected: Message, actual: Message, point: Point) -> Message | None:
    """The parser escapes a control character written raw inside an argument string (`\\n`); llama.cpp copies it
    raw, so its arguments are not JSON."""
    return changed_arguments(expected, actual, escaped_controls)


def closed_arguments(expected: Message, actual: Message, point: Point) -> Message | None:
    """A finished call whose arguments are not a JSON object gets them closed at their last closable point
    (`{}` when nothing is closable); llama.cpp keeps them broken."""
    if point.cut:
        return None
    return changed_arguments(expected, actual, lambda arguments: arguments if is_object(arguments)
                             else closed(arguments))


def kept_stream(expected: Message, actual: Message, point: Point) -> Message | None:
    """Where llama.cpp's reading of the whole reply takes back what its stream showed (drops a call, reads the
    reply as empty or as other text), the parser's reading is what its own stream showed last: llama.cpp's stream
    view before it took anything back, as the parser's other policies show a snapshot and then finish a reading
    (`Policies.explain` applies them)."""
    shown = point.stream_end
    if shown is None or shown == expected or not takes_back(shown, expected):
        return None
    return shown


def takes_back(shown: Message, later: Message) -> bool:
    """Whether a later reading lacks something an earlier one showed: text it does not go on from, a call it
    lost, or arguments it does not go on from."""
    if not later.reasoning_content.startswith(shown.reasoning_content):
        return True
    if not later.content.startswith(shown.content) or len(later.tool_calls) < len(shown.tool_calls):
        return True
    return any(
        before.name != after.name or not after.arguments.startswith(before.arguments)
        for before, after in zip(shown.tool_calls, later.tool_calls)
    )


def edge_whitespace(expected: Message, actual: Message, point: Point) -> Message | None:
    """The parser trims or keeps whitespace at the start and end of content and reasoning by rules of its own
    (a thought kept as written, the text around calls stripped); llama.cpp trims as its format says. The text
    between the edges is the same."""
    changes = {}
    for name in TEXT_FIELDS:
        mine, theirs = getattr(expected, name), getattr(actual, name)
        if mine != theirs and mine.strip() == theirs.strip():
            changes[name] = theirs
    return dataclasses.replace(expected, **changes) if changes else None


def paced_arguments(expected: Message, actual: Message, point: Point) -> Message | None:
    """While text may still arrive, the parser streams a call's arguments in increments of its own (holding a
    value until it parses, or showing the space after a colon early): at a snapshot, the parser's arguments of
    the same call and llama.cpp's are each a prefix of the other, never other text."""
    if not point.cut:
        return None
    calls = list(expected.tool_calls)
    for index, (mine, theirs) in enumerate(zip(expected.tool_calls, actual.tool_calls)):
        shown, other = mine.arguments, theirs.arguments
        paced = shown.startswith(other) or other.startswith(shown)
        if mine.name == theirs.name and shown != other and paced:
            calls[index] = dataclasses.replace(mine, arguments=other)
    return with_calls(expected, calls) if calls != list(expected.tool_calls) else None


def raw_text_for_empty_read(expected: Message, actual: Message, point: Point) -> Message | None:
    """Where llama.cpp reads a finished reply as an empty message, the parser answers with the reply's text as
    content (llama-server's final answer falls back to the generated text)."""
    if point.cut or expected != Message() or actual != Message(content=point.text):
        return None
    return actual


def invented_call_ids(expected: Message, actual: Message, point: Point) -> Message | None:
    """A call the parser shows without the id llama.cpp reads (the model writes its id after its name, and the
    parser keeps the id it invented before that, which the harness leaves empty); the call is otherwise alike."""
    calls = list(expected.tool_calls)
    for index, (mine, theirs) in enumerate(zip(expected.tool_calls, actual.tool_calls)):
        if mine.id and not theirs.id and mine.name == theirs.name:
            calls[index] = dataclasses.replace(mine, id="")
    return with_calls(expected, calls) if calls != list(expected.tool_calls) else None


KEPT_STREAM = "kept_stream"
RULES: dict[str, Rule] = {
    "held_marker_start": held_marker_start,
    "held_arguments": held_arguments,
    "escaped_control_characters": escaped_control_characters,
    "closed_arguments": closed_arguments,
    "kept_stream": kept_stream,
    "finished_text_kept": finished_text_kept,
    "edge_whitespace": edge_whitespace,
    "paced_arguments": paced_arguments,
    "raw_text_for_empty_read": raw_text_for_empty_read,
    "invented_call_ids": invented_call_ids,
}


