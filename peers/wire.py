"""The JSON-lines side of a peer's adapter: it runs in the peer's own environment, so it imports only the
standard library (README, "The subprocess parser protocol")."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any, Protocol, TextIO


class Unsupported(Exception):
    """The adapter declines a session (the peer has no parser for its template or mode)."""


class Reader(Protocol):
    """An opened session: whole reads and streams."""

    def parse(self, text: str, partial: bool) -> dict[str, Any]:
        """The reading of a whole reply."""

    def stream(self, chunks: list[str], finish: bool) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The snapshot after each chunk, and the final reading when the stream finishes."""


def reading(content: str, reasoning: str, calls: list[dict[str, str]]) -> dict[str, Any]:
    """A reading as the protocol writes it."""
    return {"content": content, "reasoning_content": reasoning, "tool_calls": calls}


def answer(
    request: dict[str, Any],
    readers: dict[int, Reader],
    open_session: Callable[[dict[str, Any]], Reader],
    info: dict[str, str],
) -> dict[str, Any]:
    """The response fields to one request."""
    op = request["op"]
    if op == "info":
        return dict(info)
    if op == "open":
        try:
            reader = open_session(request["session"])
        except Unsupported as why:
            return {"unsupported": str(why)}
        handle = len(readers)
        readers[handle] = reader
        return {"reader": handle}
    if op == "parse":
        return {"reading": readers[request["reader"]].parse(request["text"], bool(request.get("partial")))}
    if op == "stream":
        snapshots, final = readers[request["reader"]].stream(list(request["chunks"]), bool(request["finish"]))
        return {"snapshots": snapshots, "final": final}
    return {"error": f"unknown op {op!r}"}


def serve(
    open_session: Callable[[dict[str, Any]], Reader],
    info: dict[str, str],
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
) -> None:
    """Answer each request line until stdin closes; a peer's exception is that call's error, its traceback on
    stderr."""
    readers: dict[int, Reader] = {}
    for line in stdin:
        request = json.loads(line)
        try:
            fields = answer(request, readers, open_session, info)
        except Exception as error:  # noqa: BLE001 - a peer's failure is this request's error answer
            traceback.print_exc(file=sys.stderr)
            fields = {"error": f"{type(error).__name__}: {error}"}
        stdout.write(json.dumps({"id": request["id"], **fields}, ensure_ascii=False) + "\n")
        stdout.flush()
