"""llama.cpp's JSON value rules (json-value, json-object, json-array, json-bool, json-null of
common/peg-parser.cpp) read by one loop with an explicit stack, so values nest to any depth; resumable on
append-only input from the last point where what was read can no longer change."""

from __future__ import annotations

import re
from typing import NamedTuple

FAIL, SUCCESS, NEED_MORE = 0, 1, 2
AT_END = 3
KINDS = ("value", "object", "array", "bool", "null")
SPACE = frozenset(" \t\n\v\f\r")
HEX = frozenset("0123456789abcdefABCDEF")
NUMBER_TAIL = frozenset("0123456789.eE+-")
_STRING_STOP = re.compile(r'["\\]')
_LITERALS = {"value": ("true", "false", "null"), "bool": ("true", "false"), "null": ("null",),
             "object": (), "array": ()}


class Stack(NamedTuple):
    """The open containers, innermost first: the closing bracket each awaits."""

    closing: str
    outer: Stack | None


class Checkpoint(NamedTuple):
    """Where a read can resume: its state, position and open containers (and, in a string, whether a key)."""

    state: str
    pos: int
    stack: Stack | None
    key: bool = False


class Scan(NamedTuple):
    """A read's outcome: status, end, whether it looked at the end of the input, where it can resume, and
    how many characters it looked at."""

    status: int
    end: int
    touched_end: bool
    resume: Checkpoint | None
    examined: int


def _space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in SPACE:
        pos += 1
    return pos


def _digits(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isdigit():
        pos += 1
    return pos


def _number(text: str, pos: int) -> tuple[int, int]:
    """json-number at `pos`: (status, end); it commits only when the next character cannot extend it (AT_END:
    complete but the input ends right after it); a fraction or an exponent needs a digit."""
    size = len(text)
    if pos < size and text[pos] == "-":
        pos += 1
    if pos >= size:
        return NEED_MORE, size
    if text[pos] == "0":
        pos += 1
    elif "1" <= text[pos] <= "9":
        pos = _digits(text, pos + 1)
    else:
        return FAIL, pos
    if pos < size and text[pos] == ".":
        fraction = pos + 1
        pos = _digits(text, fraction)
        if pos == fraction:
            return (NEED_MORE, size) if pos >= size else (FAIL, pos)
    if pos < size and text[pos] in "eE":
        pos += 1
        if pos < size and text[pos] in "+-":
            pos += 1
        exponent = pos
        pos = _digits(text, pos)
        if pos == exponent:
            return (NEED_MORE, size) if pos >= size else (FAIL, pos)
    if pos >= size:
        return AT_END, size
    return (FAIL, pos) if text[pos] in NUMBER_TAIL else (SUCCESS, pos)


def scan(text: str, start: int, kind: str, lenient: bool, resume: Checkpoint | None = None) -> Scan:
    """Read one JSON value of `kind` at `start` (from `resume` when given) as the PEG rules read it: SUCCESS
    with its end, NEED_MORE (lenient) where the input ends inside it, else FAIL."""
    size = len(text)
    state, pos, stack, key = resume if resume is not None else Checkpoint("value", start, None)
    stable = resume
    begin = pos

    def out_of_input(end: int = size) -> Scan:
        return Scan(NEED_MORE if lenient else FAIL, end, True, stable, size - begin)

    def failed() -> Scan:
        return Scan(FAIL, start, False, stable, pos - begin)

    while True:
        if state == "value":
            if pos >= size:
                return out_of_input()
            allowed = kind if stack is None and pos == start else "value"
            char = text[pos]
            if char in "{[" and allowed in ("value", "object" if char == "{" else "array"):
                stack = Stack("}" if char == "{" else "]", stack)
                pos += 1
                state = "open"
                stable = Checkpoint(state, pos, stack)
                continue
            if allowed == "value" and char == '"':
                pos, state, key = pos + 1, "string", False
                continue
            if allowed == "value" and (char == "-" or "0" <= char <= "9"):
                status, end = _number(text, pos)
                if status == NEED_MORE or (status == AT_END and lenient):
                    return out_of_input()
                if status in (SUCCESS, AT_END):
                    pos, state = end, "after"
                    continue
            for literal in _LITERALS[allowed]:
                if text.startswith(literal, pos):
                    pos, state = pos + len(literal), "after"
                    break
                if pos + len(literal) > size and lenient and literal.startswith(text[pos:]):
                    return out_of_input()
            else:
                return failed()
        elif state == "string":
            stop = _STRING_STOP.search(text, pos)
            if stop is None:
                pos = size
                stable = Checkpoint("string", pos, stack, key)
                return out_of_input()
            pos = stop.start()
            if text[pos] == '"':
                pos += 1
                state = "colon" if key else "after"
                continue
            if pos + 1 >= size:
                stable = Checkpoint("string", pos, stack, key)
                return out_of_input(pos)
            escaped = text[pos + 1]
            if escaped == '"' or escaped in "\\/bfnrt":
                pos += 2
            elif escaped == "u":
                digits = text[pos + 2:pos + 6]
                if not all(d in HEX for d in digits):
                    return failed()
                if len(digits) < 4:
                    stable = Checkpoint("string", pos, stack, key)
                    return out_of_input(pos)
                pos += 6
            else:
                return failed()
        elif state == "open":
            pos = _space(text, pos)
            if pos >= size:
                return out_of_input()
            assert stack is not None
            if text[pos] == stack.closing:
                stack, pos, state = stack.outer, pos + 1, "after"
            else:
                state = "key" if stack.closing == "}" else "value"
        elif state == "key":
            if pos >= size:
                return out_of_input()
            if text[pos] != '"':
                return failed()
            pos, state, key = pos + 1, "string", True
        elif state == "colon":
            pos = _space(text, pos)
            if pos >= size:
                return out_of_input()
            if text[pos] != ":":
                return failed()
            pos, state = _space(text, pos + 1), "value"
        else:
            if stack is None:
                return Scan(SUCCESS, pos, False, stable, pos - begin)
            stable = Checkpoint("after", pos, stack)
            pos = _space(text, pos)
            if pos >= size:
                return out_of_input()
            if text[pos] == ",":
                pos = _space(text, pos + 1)
                state = "key" if stack.closing == "}" else "value"
            elif text[pos] == stack.closing:
                stack, pos = stack.outer, pos + 1
            else:
                return failed()
