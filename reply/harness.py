"""The harness's parser protocol: `reply.harness:factory`."""

from __future__ import annotations

from typing import Any

from reply.reader import Reader, open_reader


class Parser:
    """The project parser as the harness drives it."""

    def open(self, session: Any) -> Reader:
        """A reader for one session (raises Unsupported)."""
        return open_reader(session)


def factory() -> Parser:
    """Make the parser."""
    return Parser()
