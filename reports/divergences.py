"""Known divergences: the committed list of deliberate differences from llama.cpp, applied to a run's rows."""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from harness.parser_specs import PROJECT_EXPECTATIONS, PROJECT_ROOT
from reports.expectations import DIVERGENCES_FILE, expectations_of
from reports.groups import distinct_codes, stream_groups, structure_groups
from reports.runs import Run
from reports.statuses import MISMATCH_KINDS, Status, raw_status

DEFAULT_PATH = PROJECT_ROOT / PROJECT_EXPECTATIONS / DIVERGENCES_FILE
GLOB_FIELDS = ("template", "family", "syntax", "origin", "shape", "mode", "chunking")
SCOPE_FIELDS = ("template", "family", "syntax")
REQUIRED_FIELDS = ("kind", "reason")


class DivergenceFileError(Exception):
    """A known-divergences file that cannot be used as written."""


@dataclass(frozen=True)
class Divergence:
    """One entry: which rows (globs on template, family, syntax, origin, shape, mode, chunking; each field one
    glob or a list of them) fail how, and why."""

    number: int
    template: tuple[str, ...]
    family: tuple[str, ...]
    syntax: tuple[str, ...]
    origin: tuple[str, ...]
    shape: tuple[str, ...]
    mode: tuple[str, ...]
    chunking: tuple[str, ...]
    kind: str
    reason: str

    @property
    def label(self) -> str:
        """A short name for the entry: its number and the globs that are not '*'."""
        scope = ", ".join(
            f"{name}={'|'.join(getattr(self, name))}" for name in GLOB_FIELDS if getattr(self, name) != ("*",)
        )
        return f"#{self.number} ({scope}; {self.kind})"


@dataclass(frozen=True, eq=False)
class Verdict:
    """Rows with their status and the divergence that covers them, and the entries that cover nothing."""

    rows: pd.DataFrame
    stale: tuple[Divergence, ...]
    not_exercised: tuple[Divergence, ...]

    @cached_property
    def stream_failures(self) -> pd.DataFrame:
        """The ways the rows' streams break a check, grouped once (reports.groups.stream_groups)."""
        return stream_groups(self.rows)

    @cached_property
    def structure_failures(self) -> pd.DataFrame:
        """The ways the parser's finished readings break a structural check, grouped once."""
        return structure_groups(self.rows)

    @property
    def unexpected(self) -> pd.DataFrame:
        """Rows a known divergence lists that now match."""
        return self.rows[self.rows["status"] == Status.UNEXPECTED_MATCH.value]

    @property
    def strict_failures(self) -> int:
        """How many unexpected matches and stale entries there are: each one fails the gate."""
        return len(self.unexpected) + len(self.stale)


def load_divergences(path: Path = DEFAULT_PATH) -> tuple[Divergence, ...]:
    """Read and check the known-divergences file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise DivergenceFileError(f"{path}: no such known-divergences file") from error
    except tomllib.TOMLDecodeError as error:
        raise DivergenceFileError(f"{path}: not valid TOML: {error}") from error
    unknown_tables = set(data) - {"divergence"}
    if unknown_tables:
        raise DivergenceFileError(
            f"{path}: unknown top-level keys {sorted(unknown_tables)}; use [[divergence]]"
        )
    return tuple(_entry(path, number, raw) for number, raw in enumerate(data.get("divergence", []), start=1))


def _entry(path: Path, number: int, raw: dict[str, object]) -> Divergence:
    """One checked entry of the file."""
    where = f"{path}: [[divergence]] #{number}"
    unknown = set(raw) - set(GLOB_FIELDS) - set(REQUIRED_FIELDS)
    if unknown:
        raise DivergenceFileError(f"{where}: unknown keys {sorted(unknown)}")
    missing = [name for name in REQUIRED_FIELDS if not raw.get(name)]
    if missing:
        raise DivergenceFileError(f"{where}: missing {', '.join(missing)}")
    if not any(name in raw for name in SCOPE_FIELDS):
        raise DivergenceFileError(f"{where}: needs a template, family or syntax glob")
    if raw["kind"] not in MISMATCH_KINDS:
        raise DivergenceFileError(f"{where}: kind {raw['kind']!r} is not one of {', '.join(MISMATCH_KINDS)}")
    if not isinstance(raw["reason"], str):
        raise DivergenceFileError(f"{where}: reason must be a string")
    values = {name: _globs(where, name, raw.get(name, "*")) for name in GLOB_FIELDS}
    reason = str(raw["reason"])
    return Divergence(number=number, kind=str(raw["kind"]), reason=reason, **values)  # type: ignore[arg-type]


def _globs(where: str, name: str, value: object) -> tuple[str, ...]:
    """A field's globs: one glob string or a non-empty list of them."""
    globs = [value] if isinstance(value, str) else value
    if not isinstance(globs, list) or not globs or not all(isinstance(glob, str) and glob for glob in globs):
        raise DivergenceFileError(f"{where}: {name} must be a non-empty glob string or a list of them")
    return tuple(globs)


class Scopes:
    """The rows of a frame that entries' globs select, each column factorized once (into codes as small as its
    distinct values allow) so that a glob tests each distinct value of it once."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.factorized: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.matched: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A column's codes and distinct values (a missing value is one of them)."""
        if name not in self.factorized:
            codes, values = distinct_codes(self.frame[name])
            self.factorized[name] = (codes.astype(np.min_scalar_type(len(values))), values)
        return self.factorized[name]

    def matching(self, name: str, patterns: tuple[str, ...]) -> np.ndarray:
        """Which rows have a value of the column that one of the globs matches (the globs tried on each distinct
        value once per column and globs: entries share them)."""
        codes, values = self.column(name)
        key = (name, patterns)
        if key not in self.matched:
            self.matched[key] = np.array([any(fnmatch.fnmatchcase(str(value), pattern) for pattern in patterns)
                                          for value in values], dtype=bool)
        return self.matched[key][codes]

    def mask(self, entry: Divergence, fields: tuple[str, ...] = GLOB_FIELDS) -> np.ndarray:
        """Which rows the entry's globs select on the given fields."""
        mask = np.ones(len(self.frame), dtype=bool)
        for name in fields:
            patterns = getattr(entry, name)
            if "*" not in patterns:
                mask &= self.matching(name, patterns)
        return mask


def apply_divergences(
    rows: pd.DataFrame, sessions: pd.DataFrame, entries: tuple[Divergence, ...], complete: bool = False
) -> Verdict:
    """Give each row a status and the label of the divergence covering it; find stale and idle entries.

    A mismatch of the entry's kind is a known divergence; a match it covers is an unexpected match; other
    failures it covers stay what they are. An entry that covers no known divergence nor unexpected match is
    stale when it selects rows of the run (they fail otherwise than it says), or when the run was `complete`
    (not narrowed by a selection) and no session of it has the entry's template, family or syntax; otherwise
    the run did not exercise it (e.g. a shape only the full profile makes, in a quick run).
    """
    frame = rows.copy(deep=False)
    codes, outcomes = distinct_codes(frame["outcome"])
    statuses = np.array([raw_status(outcome).value for outcome in outcomes], dtype=object)[codes]
    labels = np.full(len(frame), "", dtype=object)
    free = np.ones(len(frame), dtype=bool)
    mismatched = (frame["outcome"] == "mismatch").to_numpy()
    matched = (frame["outcome"] == "match").to_numpy()
    kinds = {kind: (frame["kind"] == kind).to_numpy() for kind in {entry.kind for entry in entries}}
    scopes, session_scopes = Scopes(frame), Scopes(sessions)
    stale: list[Divergence] = []
    not_exercised: list[Divergence] = []
    for entry in entries:
        selected = scopes.mask(entry)
        in_scope = selected & free
        known = in_scope & mismatched & kinds[entry.kind]
        unexpected = in_scope & matched
        statuses[known] = Status.KNOWN.value
        statuses[unexpected] = Status.UNEXPECTED_MATCH.value
        covered = known | unexpected
        labels[covered] = entry.label
        free &= ~covered
        if covered.any():
            continue
        if selected.any() or (complete and not session_scopes.mask(entry, (*SCOPE_FIELDS, "mode")).any()):
            stale.append(entry)
        else:
            not_exercised.append(entry)
    frame["status"] = pd.Series(statuses, index=frame.index, dtype=frame["outcome"].dtype)
    frame["divergence"] = pd.Series(labels, index=frame.index, dtype=frame["outcome"].dtype)
    return Verdict(rows=frame, stale=tuple(stale), not_exercised=tuple(not_exercised))


def classify_run(run: Run, path: Path | None = None) -> Verdict:
    """A run's rows classified with the known divergences of the file at `path`, by default those of the
    parser the run's stamp names (none for a parser without expectations, such as llama.cpp itself)."""
    if path is None:
        path = expectations_of(run.stamp).divergences
    entries = load_divergences(path) if path is not None else ()
    return apply_divergences(run.rows, run.sessions, entries, run.complete)
