"""The committed template index: one entry per upstream template, with the metadata corpora are built from."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from templates.pins import resolve_version
from templates.upstream import ensure_source

INDEX_PATH = Path(__file__).with_name("index.json")
FAMILIES_PATH = Path(__file__).with_name("families.json")

KwargValue = str | bool | int


@dataclass(frozen=True)
class TemplateEntry:
    """One upstream template: its hash, readable family, reply syntax and what its sessions need."""

    name: str
    sha256: str
    family: str
    syntax: str
    bos: str = ""
    eos: str = ""
    kwargs: tuple[tuple[str, tuple[KwargValue, ...]], ...] = ()
    think_start: str = ""
    think_end: str = ""
    end_of_turn: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    object_arguments: bool = True
    system_role: bool = True
    writes_calls: bool = True
    vocab: str = ""
    vocab_exact: bool = False
    split_markers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """This entry as a plain dict (kwargs as an object of value lists)."""
        data = asdict(self)
        data["kwargs"] = {key: list(values) for key, values in self.kwargs}
        data["end_of_turn"] = list(self.end_of_turn)
        data["markers"] = list(self.markers)
        data["split_markers"] = list(self.split_markers)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TemplateEntry:
        """An entry from the dict `to_json` writes."""
        fields = dict(data)
        fields["kwargs"] = tuple(
            (key, tuple(values)) for key, values in sorted(data.get("kwargs", {}).items())
        )
        fields["end_of_turn"] = tuple(data.get("end_of_turn", ()))
        fields["markers"] = tuple(data.get("markers", ()))
        fields["split_markers"] = tuple(data.get("split_markers", ()))
        return cls(**fields)


class IndexFileError(Exception):
    """The index file is missing or malformed."""


def dumps_index(entries: list[TemplateEntry]) -> str:
    """The index file text: entries sorted by name, keys sorted, one trailing newline."""
    rows = [entry.to_json() for entry in sorted(entries, key=lambda entry: entry.name)]
    return json.dumps(rows, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def load_index(path: Path = INDEX_PATH) -> dict[str, TemplateEntry]:
    """The index as a dict from template file name to entry."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        entries = [TemplateEntry.from_json(row) for row in rows]
    except (OSError, ValueError, TypeError) as error:
        raise IndexFileError(f"{path}: cannot read the template index: {error}") from error
    return {entry.name: entry for entry in entries}


def index_hash(path: Path = INDEX_PATH) -> str:
    """The sha256 of the index file, stamped on every run."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def templates_dir(version: str | None = None) -> Path:
    """The upstream templates directory of a pinned llama.cpp (extracted into the cache on first use)."""
    return ensure_source(resolve_version(version)) / "models" / "templates"


def template_source(name: str, version: str | None = None) -> str:
    """The upstream text of a template file at a pin."""
    path = templates_dir(version) / name
    if not path.is_file():
        raise FileNotFoundError(f"template {name!r} is not in {path.parent}")
    return read_template(path)


def read_template(path: Path) -> str:
    """A template file's text, byte for byte (no newline translation)."""
    return path.read_bytes().decode("utf-8")


def sha256_text(text: str) -> str:
    """The sha256 of a template's UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
