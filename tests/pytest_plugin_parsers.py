"""A parser with a bug planted for the pytest plugin's tests: the project parser, dropping every reading's last
tool call."""

from __future__ import annotations

import dataclasses
from typing import Any

from reply.harness import factory as reply_factory


def dropped(reading: Any) -> Any:
    """The reading without its last tool call."""
    return dataclasses.replace(reading, tool_calls=reading.tool_calls[:-1])


class DroppingStream:
    """A stream whose every snapshot and end lack the last call."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def feed(self, chunk: str) -> Any:
        """The snapshot after this chunk, its last call dropped."""
        return dropped(self.stream.feed(chunk))

    def finish(self) -> Any:
        """The final reading, its last call dropped."""
        return dropped(self.stream.finish())


class DroppingReader:
    """A reader whose every reading lacks the last call."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def parse(self, text: str, partial: bool = False) -> Any:
        """The whole reading, its last call dropped."""
        return dropped(self.reader.parse(text, partial=partial))

    def stream(self) -> DroppingStream:
        """A stream dropping the last call."""
        return DroppingStream(self.reader.stream())


class DroppingParser:
    """The project parser, dropping the last call of each reading."""

    name = "reply-dropping-last-call"

    def __init__(self) -> None:
        self.parser = reply_factory()

    def open(self, session: Any) -> DroppingReader:
        """The project parser's reader, wrapped."""
        return DroppingReader(self.parser.open(session))


def factory() -> DroppingParser:
    """Make the parser."""
    return DroppingParser()
