"""Where a sweep's sessions and replies come from: the catalog, or any object with its two calls."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from chatparity.model import Reply
from corpora import catalog
from harness.specs import import_object
from harness.sweep_config import SweepConfig


class Source(Protocol):
    """The two calls the sweep makes of a corpus."""

    def plan(self, config: SweepConfig) -> Sequence[Any]:
        """The planned sessions the run selects (objects with session, entry, jinja_error)."""

    def replies(self, planned: Any, profile: str) -> Sequence[Reply]:
        """Every reply of a planned session under a profile."""


class CatalogSource:
    """corpora.catalog: every template, mode and corpus, narrowed by the run's selection."""

    def plan(self, config: SweepConfig) -> Sequence[Any]:
        """corpora.catalog.plan with the run's profile and selection."""
        corpus = Path(config.corpus) if config.corpus else None
        return catalog.plan(
            config.profile,
            templates=config.templates,
            family=config.family,
            mode=config.mode,
            corpus_file=corpus,
        )

    def replies(self, planned: Any, profile: str) -> Sequence[Reply]:
        """corpora.catalog.replies."""
        return catalog.replies(planned, profile)


def load_source(spec: str) -> Source:
    """`catalog`, or `module:attribute` (module dotted or a .py file) naming an object or module with
    plan(config) and replies(planned, profile)."""
    if spec == "catalog":
        return CatalogSource()
    _, source = import_object(spec, "source")
    if not (callable(getattr(source, "plan", None)) and callable(getattr(source, "replies", None))):
        raise ValueError(  # noqa: TRY004 - a wrong spec is wrong input, a ValueError as every spec error
            f"source {spec!r}: needs plan(config) and replies(planned, profile)")
    return source
