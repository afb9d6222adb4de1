"""An example parser program for `--parser 'cmd:python tests/sweep_example_parser.py'`.

It speaks the sweep's subprocess protocol (docs/protocols.md, "The subprocess parser protocol") and answers with the
oracle's readings, so a sweep through it must match the oracle everywhere.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

from oracle.client import Oracle

READER_NUMBERS = itertools.count(1)


def reading(found: Any) -> dict[str, Any]:
    """A reading as the protocol writes it."""
    return found.to_json()


def answer(oracle: Oracle, readers: dict[int, int], request: dict[str, Any]) -> dict[str, Any]:
    """The response to one request."""
    op = request["op"]
    if op == "info":
        return {"name": "oracle-over-json-lines", "revision": oracle.info()["build_id"]}
    if op == "open":
        session = request["session"]
        render = oracle.render(
            {
                "template": session["template_source"],
                "bos": session["bos"],
                "eos": session["eos"],
                "messages": session["messages"],
                "tools": session["tools"],
                "tool_choice": session["tool_choice"],
                "parallel_tool_calls": session["parallel_tool_calls"],
                "enable_thinking": session["enable_thinking"],
                "reasoning_format": session["reasoning_format"],
                "chat_template_kwargs": session["chat_template_kwargs"],
                "add_generation_prompt": True,
                "now": session["now"],
            }
        )
        reader = next(READER_NUMBERS)
        readers[reader] = render.handle
        return {"reader": reader}
    if op == "close":
        readers.pop(request["reader"], None)
        return {}
    handle = readers[request["reader"]]
    if op == "parse":
        return {"reading": reading(oracle.parse(handle, request["text"], partial=request["partial"]))}
    if op == "stream":
        chunks = request["chunks"]
        ends = [sum(len(chunk) for chunk in chunks[: index + 1]) for index in range(len(chunks))]
        read = oracle.stream(handle, "".join(chunks), ends)
        return {"snapshots": [reading(item) for item in read.partials], "final": reading(read.final)}
    return {"error": f"unknown op {op!r}"}


def main() -> None:
    """Answer requests, one JSON line each, until stdin closes."""
    oracle = Oracle()
    readers: dict[int, int] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            response = answer(oracle, readers, request)
        except Exception as error:  # noqa: BLE001 - every failure is this request's error answer
            response = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps({"id": request["id"], **response}, ensure_ascii=False), flush=True)
    oracle.close()


if __name__ == "__main__":
    main()
