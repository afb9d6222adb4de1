"""Which tokenizer each template family streams with: a vocab GGUF the pinned sdist ships, plus added tokens."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

VOCABS_PATH = Path(__file__).resolve().parent.parent / "templates" / "vocabs.json"


class VocabError(ValueError):
    """The vocab table names something that does not exist, or is malformed."""


@dataclass(frozen=True)
class Vocab:
    """A tokenizer: the sdist's `models/ggml-vocab-FILE.gguf`, with `added` appended as user-defined tokens
    (the family's own special tokens the shipped file lacks); `exact` when it is the family's real tokenizer."""

    name: str
    file: str
    exact: bool
    added: tuple[str, ...] = ()

    def key(self) -> list[Any]:
        """What a tokenization depends on, for cache keys."""
        return [self.name, self.file, list(self.added)]


@cache
def vocab_table(path: Path = VOCABS_PATH) -> dict[str, Any]:
    """The curated table: vocabs by name, the vocab of each family, and the default for other families."""
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
        vocabs = table["vocabs"]
        for family, name in table["families"].items():
            if name not in vocabs:
                raise VocabError(f"{path.name}: family {family!r} names the unknown vocab {name!r}")
        if table["default"] not in vocabs:
            raise VocabError(f"{path.name}: the default vocab {table['default']!r} is not in 'vocabs'")
    except (OSError, ValueError, KeyError, TypeError) as error:
        if isinstance(error, VocabError):
            raise
        raise VocabError(f"{path}: cannot read the vocab table: {error!r}") from error
    return table


def vocab_named(name: str) -> Vocab:
    """The vocab called `name` in the table (VocabError listing the names when there is none)."""
    vocabs = vocab_table()["vocabs"]
    if name not in vocabs:
        raise VocabError(f"unknown vocab {name!r}: use one of {', '.join(sorted(vocabs))}")
    spec = vocabs[name]
    return Vocab(name, spec["file"], bool(spec["exact"]), tuple(spec.get("added", ())))


def vocab_of_family(family: str) -> Vocab:
    """The vocab a template family streams with: its own, or the table's default (never exact)."""
    table = vocab_table()
    return vocab_named(table["families"].get(family, table["default"]))
