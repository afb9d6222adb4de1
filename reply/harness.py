"""The harness's parser protocol: `reply.harness:factory`."""

from __future__ import annotations

from typing import Any

from reply.reader import Reader, open_reader

READERS_KEPT = 16


class Parser:
    """The project parser as the harness drives it: sessions whose readers read every reply alike
    (`Reader.equivalence`) share one reader, so a reply they share is read once."""

    def __init__(self) -> None:
        self.readers: dict[tuple[object, ...], Reader] = {}

    def open(self, session: Any) -> Reader:
        """A reader for one session (raises Unsupported)."""
        reader = open_reader(session)
        key = reader.equivalence()
        found = self.readers.pop(key, None) or reader
        if len(self.readers) >= READERS_KEPT:
            del self.readers[next(iter(self.readers))]
        self.readers[key] = found
        return found


def factory() -> Parser:
    """Make the parser."""
    return Parser()
