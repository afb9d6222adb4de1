"""The harness's parser protocol: `reply.harness:factory`."""

from __future__ import annotations

from typing import Any

from reply.reader import Reader, inputs_key, reader_inputs

READERS_KEPT = 16
INPUTS_KEPT = 1024


class Parser:
    """The project parser as the harness drives it: sessions whose readers read every reply alike
    (`Reader.equivalence`) share one reader, so a reply they share is read once; sessions whose readers are
    built from equal inputs (`inputs_key`) find it without building the grammar again."""

    def __init__(self) -> None:
        self.readers: dict[tuple[object, ...], Reader] = {}
        self.equivalences: dict[tuple[object, ...], tuple[object, ...]] = {}

    def open(self, session: Any) -> Reader:
        """A reader for one session (raises Unsupported)."""
        syntax, template, request = reader_inputs(session)
        inputs = inputs_key(syntax, template, request)
        key = self.equivalences.get(inputs) if inputs is not None else None
        found = self.readers.pop(key, None) if key is not None else None
        if found is None:
            reader = Reader(syntax, template, request)
            key = reader.equivalence()
            found = self.readers.pop(key, None) or reader
            if inputs is not None:
                if len(self.equivalences) >= INPUTS_KEPT:
                    del self.equivalences[next(iter(self.equivalences))]
                self.equivalences[inputs] = key
        if len(self.readers) >= READERS_KEPT:
            del self.readers[next(iter(self.readers))]
        self.readers[key] = found
        return found


def factory() -> Parser:
    """Make the parser."""
    return Parser()
