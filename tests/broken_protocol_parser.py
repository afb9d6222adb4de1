"""A parser program that breaks the subprocess protocol on purpose, for `chatparity protocol-check`'s tests:
`python tests/broken_protocol_parser.py [declines]`."""

from __future__ import annotations

import json
import sys


def answer(request: dict, declines: bool) -> dict:
    """The (wrong) answer to one request."""
    op = request["op"]
    if op == "open":
        return {"unsupported": "not mine"} if declines else {"reader": "same"}
    if op == "parse" and request["text"] == "":
        return {"reading": {"content": 5, "reasoning_content": "", "tool_calls": []}}
    if op == "parse" and request["text"] == "\n\n":
        print("debug: whitespace")
    if op == "parse":
        return {"reading": {"content": request["text"], "reasoning_content": ""}}
    if op == "stream":
        empty = {"reasoning_content": "", "tool_calls": []}
        return {"snapshots": [{"content": text, **empty} for text in request["chunks"]][1:]}
    return {"error": f"unknown op {op}"}


def main() -> None:
    """Answer each request line until stdin closes."""
    declines = sys.argv[1:] == ["declines"]
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"id": request["id"], **answer(request, declines)}), flush=True)


if __name__ == "__main__":
    main()
