"""The input rule every parser may rely on: each string a sweep sends (session fields, replies) is Unicode
text, never a lone surrogate (\\ud800-\\udfff), which Rust, Zig or Dart strings cannot hold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatparity.model import Reply, Session
from harness.command_parser import session_json


def is_surrogate(character: str) -> bool:
    """Whether a code point is a surrogate (only ever alone in a Python string)."""
    return "\ud800" <= character <= "\udfff"


def lone_surrogate_in(value: Any, path: str) -> str | None:
    """Where a JSON value holds a lone surrogate (`path` extended to the string, and the code point's offset),
    or None when every string is text."""
    if isinstance(value, str):
        offset = next((index for index, character in enumerate(value) if is_surrogate(character)), None)
        return None if offset is None else f"{path} at code point {offset}"
    if isinstance(value, dict):
        for key, item in value.items():
            found = lone_surrogate_in(key, f"{path} key {key!r}") or lone_surrogate_in(item, f"{path}.{key}")
            if found:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = lone_surrogate_in(item, f"{path}[{index}]")
            if found:
                return found
    return None


def broken_input(session: Session, replies: Sequence[Reply]) -> str | None:
    """Where a session or one of its replies breaks the input rule, in words, or None when neither does."""
    found = lone_surrogate_in(session_json(session), "session")
    for reply in replies:
        found = found or lone_surrogate_in(reply.text, f"reply (origin {reply.origin}, shape {reply.shape})")
    return f"{found}: a lone surrogate (\\ud800-\\udfff) is not text; no parser is sent it" if found else None
