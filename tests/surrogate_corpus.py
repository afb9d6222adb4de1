"""A sweep source whose second session has a reply holding a lone surrogate, which no parser may be sent."""

from __future__ import annotations

from typing import Any

from sweep_corpus import QWEN3, planned

from chatparity.model import Reply, ToolMode
from corpora.planning import PlannedSession

CLEAN = Reply("It is sunny in Rio.", False, "hand", "content")
BROKEN = Reply("Rio \ud800 sunny.", False, "hand", "surrogate")


def plan(config: Any) -> list[PlannedSession]:
    """Two Qwen3 sessions: tools auto, and tools parallel."""
    return [planned(QWEN3, True, ToolMode.AUTO), planned(QWEN3, True, ToolMode.PARALLEL)]


def replies(session: PlannedSession, profile: str) -> list[Reply]:
    """A clean reply in the first session; a clean and a broken one in the second."""
    return [CLEAN] if session.session.mode.tools is ToolMode.AUTO else [CLEAN, BROKEN]
