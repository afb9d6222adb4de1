"""The harness's parser protocol: `reply.harness:factory`."""

from __future__ import annotations

from typing import Any

from reply.reader import Reader, inputs_key, reader_inputs

READERS_KEPT = 16
INPUTS_KEPT = 1024


class Parser:
    """The project parser as the harness drives it: sessions whose readers read every reply alike
    (`Reader.equivalence`) share one reader, so a reply they share is read once; sessions whose readers are
    built from equal inputs (`inputs_key`) find it without building the grammar again. A reader no longer kept
    forgets its reads (its records point back at it, a cycle only the garbage collector would free)."""

    name = "reply"

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
                kept(self.equivalences, inputs, key, INPUTS_KEPT)
        dropped = kept(self.readers, key, found, READERS_KEPT)
        if dropped is not None:
            dropped.forget()
        return found


def kept(kept_by: dict[Any, Any], key: Any, value: Any, limit: int) -> Any:
    """Keep `value` under `key` as the newest entry, dropping the oldest when `limit` entries are kept; the
    dropped value (None when none was)."""
    dropped = kept_by.pop(next(iter(kept_by))) if len(kept_by) >= limit else None
    kept_by[key] = value
    return dropped


def factory() -> Parser:
    """Make the parser."""
    return Parser()
