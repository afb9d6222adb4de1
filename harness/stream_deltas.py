"""A stream answered as deltas, as llama-server sends a stream to an OpenAI client: each chunk's text added to
content and reasoning and each call that grew by its index, merged here into the snapshots they stand for."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from chatparity.model import Message, ParserCrashed, Reading, Rejection, ToolCall

TEXTS = ("content", "reasoning_content")
CALL_TEXTS = ("name", "arguments")


def merged(before: Message, delta: dict[str, Any], what: str) -> Message:
    """The message a client holds after merging one delta into `before`; ParserCrashed naming what is malformed."""
    try:
        texts = {field: getattr(before, field) + text_of(delta, field) for field in TEXTS}
        calls = list(before.tool_calls)
        for grown in delta.get("tool_calls") or []:
            index = grown["index"]
            if not isinstance(index, int) or not 0 <= index <= len(calls):
                raise ValueError(f"tool call index {index!r} where {len(calls)} calls were shown")
            if index == len(calls):
                calls.append(ToolCall("", ""))
            old = calls[index]
            calls[index] = ToolCall(old.name + text_of(grown, "name"), old.arguments + text_of(grown, "arguments"),
                                    text_of(grown, "id") or old.id)
    except (AttributeError, TypeError, KeyError, ValueError) as error:
        raise ParserCrashed(f"malformed {what}: {error}: {json.dumps(delta)[:200]}") from error
    return Message(tool_calls=tuple(calls), **texts)


def text_of(data: dict[str, Any], field: str) -> str:
    """A delta's text for a field ('' when it adds none); a TypeError when it is not a string."""
    value = data.get(field, "")
    if not isinstance(value, str):
        raise TypeError(f"{field} is not a string")
    return value


class MergedDeltas:
    """The snapshots a stream's deltas stand for, each the message merged so far (or a refusal where that chunk's
    read was refused: the message shown stays what it was). The deltas are kept and merged afresh each time the
    snapshots are read, so memory grows with the reply, not with every snapshot whole; a malformed delta is
    found when they are given."""

    def __init__(self, deltas: Sequence[Any]) -> None:
        self.deltas = tuple(deltas)
        last: Reading = Message()
        for last in self:
            pass
        self.last = last

    def __iter__(self) -> Iterator[Reading]:
        shown = Message()
        for index, delta in enumerate(self.deltas):
            what = f"delta {index}"
            if not isinstance(delta, dict):
                raise ParserCrashed(f"malformed {what}: expected an object, got {json.dumps(delta)[:200]}")
            if "rejected" in delta:
                yield Rejection(str(delta["rejected"]))
                continue
            shown = merged(shown, delta, what)
            yield shown


def agreeing(snapshots: Iterable[Reading], deltas: Iterable[Reading]) -> None:
    """ParserCrashed where a stream answered both ways says two things: the deltas merged must be the snapshots."""
    for index, (snapshot, merged_so_far) in enumerate(zip(snapshots, deltas, strict=True)):
        if snapshot != merged_so_far:
            raise ParserCrashed(f"stream: delta {index} merged gives {merged_so_far} but snapshot {index} is {snapshot}")
