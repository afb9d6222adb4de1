"""Replies and cases: the text a model wrote after the generation prompt, with its truth where known."""

from __future__ import annotations

from dataclasses import dataclass, field

from corpora.sessions import Session, stable_hash
from harness.readings import Message


@dataclass(frozen=True)
class Reply:
    """A model's reply: finished or partial, where it came from, and the message it encodes if known."""

    text: str
    partial: bool
    origin: str
    shape: str
    truth: Message | None = field(default=None, compare=False)
    note: str = field(default="", compare=False)


@dataclass(frozen=True)
class Case:
    """A session and one reply read under it, with a stable id."""

    session: Session
    reply: Reply

    @property
    def id(self) -> str:
        """A stable hash of the template, mode, conversation, reply and partial flag."""
        return stable_hash(self.session.id, self.reply.text, self.reply.partial)
