"""A parser's known divergences: the rare departures from llama.cpp no policy's rule can decide, each selecting rows
by globs (template, family, syntax, origin, shape, mode, chunking), read from `known_divergences.toml` in its
expectations and applied to each row as the sweep makes it."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from chatparity.model import Kind
from harness.expectation_files import read_tables

DIVERGENCES_FILE = "known_divergences.toml"
GLOB_FIELDS = ("template", "family", "syntax", "origin", "shape", "mode", "chunking")
SCOPE_FIELDS = ("template", "family", "syntax")
REQUIRED_FIELDS = ("name", "kind", "reason", "undecidable")
MISMATCH_KINDS = tuple(kind.value for kind in Kind)
UNEXPECTED = "unexpected match of "
"""How a row an entry selects but that matches is explained: the entry no longer holds there."""


class DivergenceFileError(Exception):
    """A known-divergences file that cannot be used as written."""


@dataclass(frozen=True)
class Divergence:
    """One entry: its name, which rows it selects (globs, each field one glob or a list of them), the mismatch
    kind they show, why, and why no policy's rule can decide it."""

    number: int
    name: str
    template: tuple[str, ...]
    family: tuple[str, ...]
    syntax: tuple[str, ...]
    origin: tuple[str, ...]
    shape: tuple[str, ...]
    mode: tuple[str, ...]
    chunking: tuple[str, ...]
    kind: str
    reason: str
    undecidable: str

    def selects(self, values: tuple[str, ...]) -> bool:
        """Whether the entry's globs select a row with these values of GLOB_FIELDS."""
        return all(
            any(fnmatch.fnmatchcase(value, pattern) for pattern in getattr(self, name))
            for name, value in zip(GLOB_FIELDS, values)
        )

    @property
    def label(self) -> str:
        """The entry's name with its number and the globs that are not '*'."""
        scope = ", ".join(
            f"{name}={'|'.join(getattr(self, name))}" for name in GLOB_FIELDS if getattr(self, name) != ("*",)
        )
        return f"{self.name} (#{self.number}: {scope}; {self.kind})"


@dataclass(frozen=True)
class KnownDivergences:
    """A parser's entries, the first that selects a row deciding it."""

    entries: tuple[Divergence, ...] = ()

    def explain(self, values: tuple[str, ...], kind: str) -> str:
        """The name of the entry that selects a row of these GLOB_FIELDS values with this mismatch kind ('' none),
        or for a matching row (kind '') that an entry selects, 'unexpected match of NAME'."""
        entry = self.selecting(values)
        if entry is None:
            return ""
        if not kind:
            return UNEXPECTED + entry.name
        return entry.name if entry.kind == kind else ""

    def selecting(self, values: tuple[str, ...]) -> Divergence | None:
        """The first entry selecting a row with these values."""
        return selecting(self.entries, values) if self.entries else None


@lru_cache(maxsize=65_536)
def selecting(entries: tuple[Divergence, ...], values: tuple[str, ...]) -> Divergence | None:
    """The first of `entries` selecting a row with these values (rows share them: a case's chunkings, a session's
    cases)."""
    return next((entry for entry in entries if entry.selects(values)), None)


NO_DIVERGENCES = KnownDivergences()


def load_divergences(path: Path) -> KnownDivergences:
    """Read and check a known-divergences file."""
    raw_entries = read_tables(path, "divergence", "known-divergences", DivergenceFileError)
    entries = tuple(entry(path, number, raw) for number, raw in enumerate(raw_entries, start=1))
    names = [item.name for item in entries]
    for number, name in enumerate(names, start=1):
        if name in names[: number - 1]:
            raise DivergenceFileError(f"{path}: [[divergence]] #{number}: field 'name': {name!r} is named twice")
    return KnownDivergences(entries)


def entry(path: Path, number: int, raw: dict[str, object]) -> Divergence:
    """One checked entry of the file."""
    where = f"{path}: [[divergence]] #{number}"
    unknown = set(raw) - set(GLOB_FIELDS) - set(REQUIRED_FIELDS)
    if unknown:
        raise DivergenceFileError(f"{where}: unknown keys {sorted(unknown)}")
    missing = [name for name in REQUIRED_FIELDS if not raw.get(name)]
    if missing:
        raise DivergenceFileError(
            f"{where}: missing {', '.join(missing)}"
            + (" (say why no policy's rule can decide these rows)" if "undecidable" in missing else "")
        )
    if not any(name in raw for name in SCOPE_FIELDS):
        raise DivergenceFileError(f"{where}: needs a template, family or syntax glob")
    if raw["kind"] not in MISMATCH_KINDS:
        raise DivergenceFileError(f"{where}: kind {raw['kind']!r} is not one of {', '.join(MISMATCH_KINDS)}")
    for name in ("name", "reason", "undecidable"):
        if not isinstance(raw[name], str):
            raise DivergenceFileError(f"{where}: field {name!r} must be a string")
    values = {name: globs(where, name, raw.get(name, "*")) for name in GLOB_FIELDS}
    return Divergence(
        number=number, name=str(raw["name"]), kind=str(raw["kind"]), reason=str(raw["reason"]),
        undecidable=str(raw["undecidable"]), **values,  # type: ignore[arg-type]
    )


def globs(where: str, name: str, value: object) -> tuple[str, ...]:
    """A field's globs: one glob string or a non-empty list of them."""
    found = [value] if isinstance(value, str) else value
    if not isinstance(found, list) or not found or not all(isinstance(glob, str) and glob for glob in found):
        raise DivergenceFileError(f"{where}: {name} must be a non-empty glob string or a list of them")
    return tuple(found)


def divergences_in(directory: Path | None) -> KnownDivergences:
    """The known divergences of an expectations directory (none without one, or without the file)."""
    if directory is None or not (directory / DIVERGENCES_FILE).is_file():
        return NO_DIVERGENCES
    return load_divergences(directory / DIVERGENCES_FILE)
