"""A parser program answering streams as deltas: the project parser (`reply`) behind the subprocess protocol, each
stream answered with `Stream.feed_delta` as llama-server sends it. `--snapshots` adds the snapshots beside the
deltas; `--snapshots-off` adds them with the last one missing its final character, which the harness must refuse.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import asdict
from types import SimpleNamespace
from typing import Any

import reply

READER_NUMBERS = itertools.count(1)


def message_json(message: reply.Message) -> dict[str, Any]:
    """A reading as the protocol writes it."""
    return {"content": message.content, "reasoning_content": message.reasoning_content,
            "tool_calls": [asdict(call) for call in message.tool_calls]}


def delta_json(delta: reply.Delta) -> dict[str, Any]:
    """A delta as the protocol writes it."""
    return {"content": delta.content, "reasoning_content": delta.reasoning_content,
            "tool_calls": [asdict(call) for call in delta.tool_calls]}


def streamed(reader: reply.Reader, chunks: list[str], finish: bool, mode: str) -> dict[str, Any]:
    """A stream's answer: a delta per chunk (a refusal where the chunk's read was refused), and the final read."""
    stream, deltas, snapshots = reader.stream(), [], []
    for chunk in chunks:
        try:
            deltas.append(delta_json(stream.feed_delta(chunk)))
            snapshots.append(message_json(stream.snapshot))
        except reply.Rejected as refusal:
            deltas.append({"rejected": refusal.reason})
            snapshots.append({"rejected": refusal.reason})
    answer: dict[str, Any] = {"deltas": deltas}
    if finish:
        try:
            answer["final"] = message_json(stream.finish())
        except reply.Rejected as refusal:
            answer["final"] = {"rejected": refusal.reason}
    if mode != "deltas":
        if mode == "snapshots-off" and "content" in snapshots[-1] and snapshots[-1]["content"]:
            snapshots[-1] = {**snapshots[-1], "content": snapshots[-1]["content"][:-1]}
        answer["snapshots"] = snapshots
    return answer


def answer(readers: dict[int, reply.Reader], request: dict[str, Any], mode: str) -> dict[str, Any]:
    """The response to one request."""
    op = request["op"]
    if op == "info":
        return {"name": f"reply-deltas-{mode}", "revision": "test"}
    if op == "open":
        try:
            reader = reply.open(SimpleNamespace(**request["session"]))
        except reply.Unsupported as error:
            return {"unsupported": str(error)}
        number = next(READER_NUMBERS)
        readers[number] = reader
        return {"reader": number}
    if op == "close":
        readers.pop(request["reader"], None)
        return {}
    reader = readers[request["reader"]]
    if op == "parse":
        try:
            return {"reading": message_json(reader.parse(request["text"], partial=request["partial"]))}
        except reply.Rejected as refusal:
            return {"reading": {"rejected": refusal.reason}}
    if op == "stream":
        return streamed(reader, request["chunks"], request["finish"], mode)
    return {"error": f"unknown op {op!r}"}


def main() -> None:
    """Answer requests, one JSON line each, until stdin closes."""
    mode = sys.argv[1].removeprefix("--") if len(sys.argv) > 1 else "deltas"
    readers: dict[int, reply.Reader] = {}
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"id": request["id"], **answer(readers, request, mode)}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
