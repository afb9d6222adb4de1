"""A parser graph as text, and a short hash of it: two graphs described alike read every input alike."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import types
from typing import Any


def fingerprint(root: Any) -> str:
    """A hash of a parser graph (`described`)."""
    return hashlib.sha256(described(root).encode()).hexdigest()[:16]


def described(root: Any) -> str:
    """A parser graph as text: each node's type and fields, literals, and predicates' bytecode and cells."""
    seen: dict[int, int] = {}

    def walk(node: Any) -> str:
        if isinstance(node, (str, int, float, bool, type(None))):
            return repr(node)
        if isinstance(node, re.Pattern):
            return f"re({node.pattern!r},{node.flags})"
        if isinstance(node, (list, tuple)):
            return "[" + ",".join(walk(item) for item in node) + "]"
        if isinstance(node, (set, frozenset)):
            return "{" + ",".join(sorted(walk(item) for item in node)) + "}"
        if isinstance(node, dict):
            return "{" + ",".join(f"{walk(key)}:{walk(value)}" for key, value in node.items()) + "}"
        if isinstance(node, types.FunctionType):
            code, cells = node.__code__, node.__closure__ or ()
            return f"fn({code.co_code.hex()},{code.co_consts!r},{[walk(c.cell_contents) for c in cells]})"
        if id(node) in seen:
            return f"#{seen[id(node)]}"
        seen[id(node)] = len(seen)
        if dataclasses.is_dataclass(node):
            names = [f.name for f in dataclasses.fields(node) if f.name != "id"]
        elif hasattr(node, "__dict__"):
            names = sorted(vars(node))
        else:
            return repr(node)
        fields = ";".join(f"{name}={walk(getattr(node, name))}" for name in names)
        return f"@{seen[id(node)]}{type(node).__name__}({fields})"

    return walk(root)
