"""The session of a stored row planned again from the catalog (its tools, thinking setting and prompt), so a
reproducer can replay a case with the peer alone."""

from __future__ import annotations

from functools import cache
from typing import Any

from chatparity.model import Session
from harness.sources import load_source
from harness.sweep_config import SweepConfig


def literal(name: str) -> str:
    """A glob matching exactly `name`."""
    return "".join(f"[{character}]" if character in "*?[" else character for character in name)


@cache
def sessions_of(template: str, mode: str, profile: str) -> dict[str, Session]:
    """The sessions of one template in one mode, by id."""
    config = SweepConfig(
        parser="reply", profile=profile, out="", templates=literal(template), mode=literal(mode)
    )
    return {planned.session.id: planned.session for planned in load_source("catalog").plan(config)}


def session_of(row: Any, profile: str = "quick") -> Session | None:
    """The row's session (None when the catalog no longer plans it)."""
    return sessions_of(row.template, row.mode, profile).get(row.session_id)
