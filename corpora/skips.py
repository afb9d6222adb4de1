"""Skips: a reply shape a generator could not make for a session, and why."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Skip:
    """One shape left out for one session, with the reason."""

    origin: str
    shape: str
    reason: str
