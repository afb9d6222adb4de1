"""Planted stream bugs: the project parser with snapshots that retract text, show a marker being written, or
rewrite a call's arguments while the reply streams; each whole read and final reading left as they are."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from reply.harness import factory as reply_factory

TOOL_CALL = "<tool_call>"

Planted = Callable[[Any, str], Any]


class PlantedStream:
    """A stream of the project parser whose snapshots pass through a planted bug."""

    def __init__(self, stream: Any, bug: Planted) -> None:
        self.stream = stream
        self.bug = bug
        self.text = ""

    def feed(self, chunk: str) -> Any:
        """The snapshot after `chunk`, as the bug shows it."""
        self.text += chunk
        return self.bug(self.stream.feed(chunk), self.text)

    def finish(self) -> Any:
        """The final reading, untouched."""
        return self.stream.finish()


class PlantedReader:
    """A reader of the project parser whose streams carry a planted bug."""

    def __init__(self, reader: Any, bug: Planted) -> None:
        self.reader = reader
        self.bug = bug

    def parse(self, text: str, partial: bool = False) -> Any:
        """The whole read, untouched."""
        return self.reader.parse(text, partial=partial)

    def stream(self) -> PlantedStream:
        """A stream whose snapshots carry the bug."""
        return PlantedStream(self.reader.stream(), self.bug)


class PlantedParser:
    """The project parser with one planted stream bug."""

    def __init__(self, bug: Planted) -> None:
        self.parser = reply_factory()
        self.bug = bug

    def open(self, session: Any) -> PlantedReader:
        """A reader whose streams carry the bug."""
        return PlantedReader(self.parser.open(session), self.bug)


def retract(snapshot: Any, text: str) -> Any:
    """Content shown with a trailing ellipsis that the next snapshot takes back."""
    if not snapshot.content:
        return snapshot
    return dataclasses.replace(snapshot, content=snapshot.content + "…")


def partial_marker(snapshot: Any, text: str, longest: int = len(TOOL_CALL) - 1) -> Any:
    """The start of `<tool_call>`, up to `longest` characters of it, shown in content while it is still being
    written."""
    for size in range(longest, 1, -1):
        if text.endswith(TOOL_CALL[:size]):
            return dataclasses.replace(snapshot, content=snapshot.content + TOOL_CALL[:size])
    return snapshot


def short_partial_marker(snapshot: Any, text: str) -> Any:
    """The start of `<tool_call>` shown in content while its first five characters are being written."""
    return partial_marker(snapshot, text, longest=5)


def compact(arguments: str) -> str:
    """Arguments rewritten without spaces when they are whole JSON, else as they are."""
    try:
        return json.dumps(json.loads(arguments), separators=(",", ":"))
    except ValueError:
        return arguments


def rewrite_arguments(snapshot: Any, text: str) -> Any:
    """Each call's arguments shown rewritten (compact JSON) while streaming, the final reading as written."""
    calls = tuple(
        dataclasses.replace(call, arguments=compact(call.arguments)) for call in snapshot.tool_calls
    )
    return dataclasses.replace(snapshot, tool_calls=calls)


def retracting() -> PlantedParser:
    """The project parser whose snapshots take back text."""
    return PlantedParser(retract)


def partial_marker_showing() -> PlantedParser:
    """The project parser whose snapshots show a partial `<tool_call>`."""
    return PlantedParser(partial_marker)


def short_partial_marker_showing() -> PlantedParser:
    """The project parser whose snapshots show a partial `<tool_call>` in fewer snapshots."""
    return PlantedParser(short_partial_marker)


def arguments_rewriting() -> PlantedParser:
    """The project parser whose snapshots rewrite call arguments mid-stream."""
    return PlantedParser(rewrite_arguments)


def content_mangling() -> PlantedParser:
    """The project parser reading every finished reply's content upper-cased (whole reads only)."""
    return ContentMangling()


class ContentMangling(PlantedParser):
    """Whole reads with upper-cased content; a bug in the final reading, not the stream."""

    def __init__(self) -> None:
        super().__init__(lambda snapshot, text: snapshot)

    def open(self, session: Any) -> PlantedReader:
        """A reader whose whole reads upper-case content."""
        return ManglingReader(self.parser.open(session), self.bug)


class ManglingReader(PlantedReader):
    """A reader whose whole reads upper-case content."""

    def parse(self, text: str, partial: bool = False) -> Any:
        """The whole read with content upper-cased."""
        message = self.reader.parse(text, partial=partial)
        return dataclasses.replace(message, content=message.content.upper())
