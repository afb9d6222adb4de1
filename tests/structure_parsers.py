"""Planted structural bugs: the project parser whose finished readings (whole, and each stream's finish) name
every call after a tool that was not offered, or whose whole readings report no problems."""

from __future__ import annotations

import dataclasses
from typing import Any

from reply.harness import factory as reply_factory

UNOFFERED = "launch_rocket"


def renamed(message: Any) -> Any:
    """The message with every call named after the unoffered tool."""
    calls = tuple(dataclasses.replace(call, name=UNOFFERED) for call in message.tool_calls)
    return dataclasses.replace(message, tool_calls=calls)


class RenamingStream:
    """A stream of the project parser whose final reading names its calls wrongly."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def feed(self, chunk: str) -> Any:
        """The snapshot after `chunk`, untouched."""
        return self.stream.feed(chunk)

    def finish(self) -> Any:
        """The final reading, its calls renamed."""
        return renamed(self.stream.finish())


class RenamingReader:
    """A reader of the project parser whose finished readings name their calls wrongly."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def parse(self, text: str, partial: bool = False) -> Any:
        """The whole read, its calls renamed."""
        return renamed(self.reader.parse(text, partial=partial))

    def stream(self) -> RenamingStream:
        """A stream whose final reading is renamed."""
        return RenamingStream(self.reader.stream())


class RenamingParser:
    """The project parser with the planted bug."""

    def __init__(self) -> None:
        self.parser = reply_factory()

    def open(self, session: Any) -> RenamingReader:
        """A reader whose finished readings carry the bug."""
        return RenamingReader(self.parser.open(session))


def calls_renaming() -> RenamingParser:
    """The project parser naming every call after a tool that was not offered."""
    return RenamingParser()


class SilentReader:
    """A reader of the project parser whose finished whole readings report no problems."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def parse(self, text: str, partial: bool = False) -> Any:
        """The whole read, its problems dropped."""
        return dataclasses.replace(self.reader.parse(text, partial=partial), problems=())

    def stream(self) -> Any:
        """The project parser's stream, untouched."""
        return self.reader.stream()


class SilentParser:
    """The project parser with its problems dropped from whole readings."""

    def __init__(self) -> None:
        self.parser = reply_factory()

    def open(self, session: Any) -> SilentReader:
        """A reader whose whole readings report no problems."""
        return SilentReader(self.parser.open(session))


def problems_dropping() -> SilentParser:
    """The project parser reporting no problems beside its whole readings (a reply without a call in a session
    offering tools then lacks no_action)."""
    return SilentParser()
