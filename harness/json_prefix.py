"""Prefixes of a call's JSON arguments, as the harness reads them on its own: where they can still close into a
JSON object, and that object closed. The parser policies that hold arguments back or close broken ones are judged
with these."""

from __future__ import annotations

import json
import re

from harness.short_cache import cached_when_short

SPACE = " \t\r\n"
SCALAR = re.compile(r"[^\s,\]}]*")
ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def is_object(arguments: str) -> bool:
    """Whether the text is a JSON object."""
    try:
        return isinstance(json.loads(arguments), dict)
    except (ValueError, RecursionError):
        return False


def escaped_controls(arguments: str) -> str:
    """The arguments with every control character written raw inside a string escaped as JSON wants it."""
    if not any(char < " " for char in arguments):
        return arguments
    out, in_string, escaping = [], False, False
    for char in arguments:
        if in_string and not escaping and char < " ":
            out.append(ESCAPES.get(char, f"\\u{ord(char):04x}"))
            continue
        out.append(char)
        if escaping:
            escaping = False
        elif in_string and char == "\\":
            escaping = True
        elif char == '"':
            in_string = not in_string
    return "".join(out)


@cached_when_short(maxsize=8192)
def closable(arguments: str) -> tuple[int, str]:
    """The longest prefix of the arguments that is a JSON object once its open string and brackets are closed
    (inside a value string but not within an escape, right after an opening bracket, or right after a complete
    value; never inside a key, after a colon, or inside a number or literal still arriving): its length and what
    closes it ('' for an empty prefix)."""
    best, closing = 0, ""
    stack: list[str] = []
    index, size = 0, len(arguments)
    expecting_key = False
    while index < size:
        char = arguments[index]
        if char in SPACE:
            index += 1
        elif not stack and (best or char != "{"):
            break
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
            expecting_key = char == "{"
            index += 1
            best, closing = index, "".join(reversed(stack))
        elif char in "}]":
            if stack[-1] != char:
                break
            stack.pop()
            index += 1
            best, closing = index, "".join(reversed(stack))
        elif char in ",:":
            expecting_key = char == "," and stack[-1] == "}"
            index += 1
        elif char == '"':
            end = string_end(arguments, index + 1)
            if expecting_key:
                if end is None:
                    break
                index, expecting_key = end, False
                continue
            if end is None:
                return value_string_prefix(arguments, index + 1), '"' + "".join(reversed(stack))
            index = end
            best, closing = index, "".join(reversed(stack))
        else:
            end = SCALAR.match(arguments, index).end()  # type: ignore[union-attr]
            if end == size or not complete_scalar(arguments[index:end]):
                break
            index = end
            best, closing = index, "".join(reversed(stack))
    return best, closing


def string_end(text: str, start: int) -> int | None:
    """Where the string whose content starts at `start` ends (after its closing quote), or None when it runs to
    the end of the text."""
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char == '"':
            return index + 1
        else:
            index += 1
    return None


def value_string_prefix(text: str, start: int) -> int:
    """How far an open value string starting at `start` may be shown: to its end, less an escape still
    arriving."""
    index, last = start, len(text)
    while index < len(text):
        if text[index] == "\\":
            width = 6 if text.startswith("u", index + 1) else 2
            if index + width > len(text):
                last = index
                break
            index += width
        else:
            index += 1
    return last


def complete_scalar(text: str) -> bool:
    """Whether a number, true, false or null is written whole."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def held(arguments: str) -> str:
    """What a stream shows of arguments still arriving: all of them when they are a JSON object, else their
    longest closable prefix, control characters escaped."""
    if is_object(arguments):
        return arguments
    return escaped_controls(arguments[: closable(arguments)[0]])


def closed(arguments: str) -> str:
    """A finished call's arguments as a JSON object: unchanged when they are one, else their longest closable
    prefix (a number or literal at their very end counted complete) with control characters escaped and its open
    string and brackets closed ('{}' when nothing of them is closable)."""
    if is_object(arguments):
        return arguments
    for ended in (arguments + " ", arguments):
        length, closing = closable(ended)
        if length:
            made = escaped_controls(arguments[:length]) + closing
            if is_object(made):
                return made
    return "{}"
