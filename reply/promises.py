"""The stream's promises on tool calls: arguments are shown only up to a point from which they can still end
as a JSON object, and a finished call's arguments are always a JSON object."""

from __future__ import annotations

import json
import re

from reply.json_value import Stack

_SPACE = " \t\r\n"
_SCALAR = re.compile(r"[^\s,\]}]*")
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')
_CONTROL_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def is_object(arguments: str) -> bool:
    """Whether the arguments are a JSON object (nested too deep for `json`, whether they scan as one)."""
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False
    except RecursionError:
        scan = ArgumentsScan()
        return scan.closable(arguments) == len(arguments.rstrip()) and scan.stack is None and not scan.broken


class ArgumentsScan:
    """A resumable scan of one call's arguments as they grow, finding their longest closable prefix: a prefix
    that is a JSON object once its open string and brackets are closed. That is inside a value string (not
    within an escape), right after an opening bracket, or right after a complete value; a key still being
    written, a colon awaiting its value, and a number or literal still arriving are not. A control character
    written raw inside a string (JSON wants it escaped) is escaped in what the scan shows (`escaped`); the last
    arguments shown and what they showed are kept (`shown`, for `shown_arguments`)."""

    def __init__(self) -> None:
        self.seen = ""
        self.index = 0
        self.stack: Stack | None = None
        self.expecting_key = False
        self.in_string = False
        self.string_is_key = False
        self.broken = False
        self.best = 0
        self.best_stack: Stack | None = None
        self.best_in_string = False
        self.controls: list[int] = []
        self.shown: tuple[str, str] | None = None

    def _mark(self, index: int, in_string: bool = False) -> None:
        self.best, self.best_stack, self.best_in_string = index, self.stack, in_string

    def closable(self, arguments: str) -> int:
        """The length of the longest closable prefix of `arguments` (which extend those scanned before, or
        the scan starts over)."""
        if not arguments.startswith(self.seen):
            self.__init__()  # type: ignore[misc]
        self.seen = arguments
        if not self.broken:
            self._advance(arguments)
        return self.best

    def escaped(self, arguments: str, length: int) -> str:
        """The first `length` characters of the scanned `arguments`, control characters in strings escaped."""
        pieces, start = [], 0
        for position in self.controls:
            if position >= length:
                break
            char = arguments[position]
            pieces += [arguments[start:position], _CONTROL_ESCAPES.get(char, f"\\u{ord(char):04x}")]
            start = position + 1
        pieces.append(arguments[start:length])
        return "".join(pieces)

    def closing(self) -> str:
        """What closes the longest closable prefix into a JSON object."""
        if not self.best:
            return "{}"
        closing, stack = ['"'] if self.best_in_string else [], self.best_stack
        while stack is not None:
            closing.append(stack.closing)
            stack = stack.outer
        return "".join(closing)

    def _advance(self, text: str) -> None:
        size = len(text)
        index = self.index
        while index < size and not self.broken:
            if self.in_string:
                stop = _STRING_STOP.search(text, index)
                end = stop.start() if stop else size
                if not self.string_is_key and end > index:
                    self._mark(end, in_string=True)
                index = end
                if index == size:
                    break
                if text[index] < " ":
                    self.controls.append(index)
                    index += 1
                    if not self.string_is_key:
                        self._mark(index, in_string=True)
                    continue
                if text[index] == "\\":
                    width = 6 if text.startswith("u", index + 1) else 2
                    if index + width > size:
                        break
                    index += width
                    if not self.string_is_key:
                        self._mark(index, in_string=True)
                    continue
                index += 1
                self.in_string = False
                if not self.string_is_key:
                    self._mark(index)
                self.expecting_key = False
                continue
            char = text[index]
            if char in _SPACE:
                index += 1
            elif not self.stack and (self.best > 0 or char != "{"):
                self.broken = True
            elif char in "{[":
                self.stack = Stack("}" if char == "{" else "]", self.stack)
                self.expecting_key = char == "{"
                index += 1
                self._mark(index)
            elif char in "}]":
                if self.stack is None or self.stack.closing != char:
                    self.broken = True
                    break
                self.stack = self.stack.outer
                index += 1
                self._mark(index)
            elif char in ",:":
                self.expecting_key = char == "," and self.stack is not None and self.stack.closing == "}"
                index += 1
            elif char == '"':
                self.in_string, self.string_is_key = True, self.expecting_key
                index += 1
                if not self.string_is_key:
                    self._mark(index, in_string=True)
            else:
                scalar = _SCALAR.match(text, index)
                end = scalar.end() if scalar else index
                if end == size:
                    break
                try:
                    json.loads(text[index:end])
                except ValueError:
                    self.broken = True
                    break
                index = end
                self._mark(index)
        self.index = index


def shown_arguments(arguments: str, scan: ArgumentsScan | None = None) -> str:
    """What a stream shows of a call's arguments so far: all of them when they are a complete JSON object,
    else their longest prefix from which they can still end as one (control characters in strings escaped)."""
    scan = scan or ArgumentsScan()
    if scan.shown is not None and scan.shown[0] == arguments:
        return scan.shown[1]
    length = scan.closable(arguments)
    if length == len(arguments.rstrip()) and scan.stack is None and is_object(arguments):
        shown = arguments
    else:
        shown = scan.escaped(arguments, length)
    scan.shown = (arguments, shown)
    return shown


def closed_arguments(arguments: str) -> str:
    """A finished call's arguments as a JSON object: unchanged when they are one, else their longest closable
    prefix (a number or literal at their very end counts as complete) with control characters in its strings
    escaped and its open string and brackets closed ("{}" when nothing of them is closable)."""
    if is_object(arguments):
        return arguments
    for ended in (arguments + " ", arguments):
        scan = ArgumentsScan()
        length = scan.closable(ended)
        closed = scan.escaped(arguments, length) + scan.closing() if length else "{}"
        if is_object(closed):
            return closed
    return "{}"
