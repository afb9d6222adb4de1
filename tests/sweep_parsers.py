"""Parsers for the sweep's tests: llama.cpp in the Python protocol, faithful or broken on purpose."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from typing import Any

from chatparity.model import Message, Rejection, Session
from oracle.client import Oracle

QWEN3 = "Qwen-Qwen3-0.6B.jinja"
LLAMA31 = "meta-llama-Llama-3.1-8B-Instruct.jinja"


class Rejected(Exception):
    """The wrapped oracle refused the reply."""


class Unsupported(Exception):
    """The wrapper declines the session."""


class Stream:
    """Each snapshot is llama.cpp's partial read of the text so far, kept when empty or refused."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.text = ""
        self.last = Message()
        self.count = 0

    def feed(self, chunk: str) -> Message:
        """The snapshot after this chunk."""
        self.text += chunk
        self.count += 1
        found = self.reader.read(self.text, True)
        if isinstance(found, Message) and found != Message():
            self.last = found
        return self.reader.parser.snapshot(self.last, self.count)

    def finish(self) -> Message:
        """The finished read."""
        return self.reader.parse(self.text)


class Reader:
    """One session's reader over the oracle."""

    def __init__(self, parser: Wrapper, session: Session, handle: int) -> None:
        self.parser = parser
        self.session = session
        self.handle = handle

    def read(self, text: str, partial: bool) -> Message | Rejection:
        """llama.cpp's read."""
        return self.parser.client.parse(self.handle, text, partial=partial)

    def parse(self, text: str, partial: bool = False) -> Message:
        """The wrapper's whole read."""
        found = self.read(text, partial)
        if isinstance(found, Rejection):
            raise Rejected(found.reason)
        return self.parser.change(found, self.session)

    def stream(self) -> Stream:
        """A fresh stream."""
        return Stream(self)


class Wrapper:
    """The oracle behind the Python protocol, with a hook that alters each final reading."""

    def __init__(self) -> None:
        self.client = Oracle()

    def change(self, message: Message, session: Session) -> Message:
        """The final reading this wrapper reports."""
        return message

    def snapshot(self, message: Message, count: int) -> Message:
        """The snapshot this wrapper reports after `count` chunks."""
        return message

    def open(self, session: Session) -> Reader:
        """Render the session in the oracle."""
        return Reader(self, session, self.client.render(session.render_request()).handle)


class DropsLastCharacter(Wrapper):
    """Loses the last character of the content."""

    def change(self, message: Message, session: Session) -> Message:
        return replace(message, content=message.content[:-1])


class SwapsOnQwen(Wrapper):
    """Swaps reasoning and content on Qwen3 only."""

    def change(self, message: Message, session: Session) -> Message:
        if session.template != QWEN3:
            return message
        return replace(message, content=message.reasoning_content, reasoning_content=message.content)


class DropsACall(Wrapper):
    """Loses the last tool call."""

    def change(self, message: Message, session: Session) -> Message:
        return replace(message, tool_calls=message.tool_calls[:-1])


class Retracts(Wrapper):
    """Takes back three characters of reasoning in the twelfth snapshot."""

    def snapshot(self, message: Message, count: int) -> Message:
        if count == 12 and len(message.reasoning_content) > 3:
            return replace(message, reasoning_content=message.reasoning_content[:-3])
        return message


class RaisesOnLlama(Wrapper):
    """Raises a plain error on every read of Llama 3.1."""

    def change(self, message: Message, session: Session) -> Message:
        if session.template == LLAMA31:
            raise RuntimeError("wrapper failure")
        return message


class RenderFailed(Exception):
    """The harness's name for a parser that reads the template but cannot render the session."""


class RenderFailsOnLlama(Wrapper):
    """Cannot render Llama 3.1 sessions while RENDER_FAILS is set (one parser before and after a change)."""

    def open(self, session: Session) -> Reader:
        if session.template == LLAMA31 and os.environ.get("RENDER_FAILS"):
            raise RenderFailed("IndexError: string index out of range")
        return super().open(session)


class DeclinesLlama(Wrapper):
    """Declines Llama 3.1 sessions at open."""

    def open(self, session: Session) -> Reader:
        if session.template == LLAMA31:
            raise Unsupported("no llama 3.1 here")
        return super().open(session)


class Echo:
    """A parser that never asks llama.cpp: the reply is its content."""

    def open(self, session: Session) -> Any:
        """Itself: no session state."""
        return self

    def parse(self, text: str, partial: bool = False) -> Message:
        """The text as content."""
        return Message(content=text)

    def stream(self) -> Any:
        """A fresh stream."""
        return EchoStream()


class EchoStream:
    """Accumulates chunks as content."""

    def __init__(self) -> None:
        self.text = ""

    def feed(self, chunk: str) -> Message:
        """The text so far as content."""
        self.text += chunk
        return Message(content=self.text)

    def finish(self) -> Message:
        """The whole text as content."""
        return Message(content=self.text)


def note(what: str, text: str) -> None:
    """Append one call, named, with the reply it read, as a JSON line to the file named by CHATPARITY_CALLS."""
    with open(os.environ["CHATPARITY_CALLS"], "a", encoding="utf-8") as log:
        log.write(json.dumps([what, text]) + "\n")


class NotesCalls(Echo):
    """Echo, noting each whole parse and each chunk fed (with the reply so far)."""

    def parse(self, text: str, partial: bool = False) -> Message:
        """The text as content, noted."""
        note("parse", text)
        return super().parse(text, partial)

    def stream(self) -> Any:
        """A fresh stream that notes what it is fed."""
        return NotingStream()


class NotingStream(EchoStream):
    """An Echo stream noting the reply so far after each chunk."""

    def feed(self, chunk: str) -> Message:
        """The text so far as content, noted."""
        found = super().feed(chunk)
        note("fed", self.text)
        return found


class Interrupts(Wrapper):
    """Stands for Ctrl-C: opening a session interrupts the run."""

    def open(self, session: Session) -> Reader:
        """Interrupt."""
        raise KeyboardInterrupt


class SleepsOnLlama(Wrapper):
    """Hangs on every read of Llama 3.1."""

    def change(self, message: Message, session: Session) -> Message:
        if session.template == LLAMA31:
            time.sleep(30)
        return message


class ExitsOnLlama(Wrapper):
    """Kills its own process when it opens Llama 3.1, as a crashing native parser would."""

    def open(self, session: Session) -> Reader:
        if session.template == LLAMA31:
            os._exit(3)
        return super().open(session)
