"""A parser's expectations: its policies, known divergences and gate baselines, found from a run's stamp."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.known_divergences import DIVERGENCES_FILE, KnownDivergences, divergences_in
from harness.parser_specs import PROJECT_EXPECTATIONS, PROJECT_ROOT
from harness.policies import Policies, policies_in

PROJECT_PARSER = "reply"
BASELINE_DIR = "baseline"
QUICK_PROFILES = ("quick", "")
"""The profile whose baseline is baseline/ ('' for a stamp older than the profile field)."""


class ParserMismatch(Exception):
    """Two runs, or a run and a baseline, of different parsers."""


@dataclass(frozen=True)
class Expectations:
    """Where a parser's expectations live: a directory holding policies.toml, known_divergences.toml and the
    baselines baseline/ and baseline-full/ (None: none)."""

    directory: Path | None

    @property
    def divergences(self) -> Path | None:
        """The known-divergences file (None when the parser has none)."""
        if self.directory is None or not (self.directory / DIVERGENCES_FILE).exists():
            return None
        return self.directory / DIVERGENCES_FILE

    @property
    def known(self) -> KnownDivergences:
        """The parser's known divergences."""
        return divergences_in(self.directory)

    @property
    def policies(self) -> Policies:
        """The parser's policies."""
        return policies_in(self.directory)

    def baseline(self, profile: str) -> Path | None:
        """The gate baseline directory of runs of a profile: baseline/ for the quick profile, baseline-PROFILE/
        for another (None when the parser has no expectations directory)."""
        if self.directory is None:
            return None
        return self.directory / (BASELINE_DIR if profile in QUICK_PROFILES else f"{BASELINE_DIR}-{profile}")

    def describe(self) -> str:
        """Where the expectations are, for messages."""
        return "none" if self.directory is None else str(self.directory)


def expectations_of(stamp: dict[str, Any]) -> Expectations:
    """A run's expectations as its stamp names them, a relative directory found from the working directory or
    else the project root (runs older than the field: the project's for `reply`)."""
    if "expectations" not in stamp:
        return Expectations(
            PROJECT_ROOT / PROJECT_EXPECTATIONS if stamp.get("parser") == PROJECT_PARSER else None
        )
    if not stamp["expectations"]:
        return Expectations(None)
    declared = Path(stamp["expectations"])
    if declared.is_absolute() or declared.exists():
        return Expectations(declared)
    return Expectations(PROJECT_ROOT / declared)


def baseline_of(stamp: dict[str, Any]) -> Path | None:
    """The gate baseline directory of a run, by its stamp's expectations and profile (None: it has none)."""
    return expectations_of(stamp).baseline(str(stamp.get("profile") or ""))


def check_same_parser(base: dict[str, Any], head: dict[str, Any], what: str, allow: bool) -> list[str]:
    """Refuse to compare two stamps of different parsers unless allowed; the warning when allowed."""
    if not base.get("parser") or base.get("parser") == head.get("parser"):
        return []
    difference = f"{what} is of parser {base.get('parser')!r}, the run of {head.get('parser')!r}"
    if not allow:
        raise ParserMismatch(f"{difference} (pass --allow-other-parser to compare them anyway)")
    return [f"WARNING: {difference}"]
