"""Chunkings: rules turning a reply into the chunks a streaming parser is fed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import accumulate

FIXED = ("whole", "char", "char2", "char3", "split")
RANDOM_PREFIX = "random:"
RANDOM_MAX_CHUNK = 8

Stream = tuple[str, ...]


def validate(name: str) -> str:
    """The chunking name itself, or a ValueError saying what a valid one looks like."""
    if name in FIXED:
        return name
    if name.startswith(RANDOM_PREFIX) and name[len(RANDOM_PREFIX) :].isdigit():
        return name
    raise ValueError(
        f"unknown chunking {name!r}: use one of {', '.join(FIXED)} or random:SEED (SEED an integer)"
    )


def parse_list(text: str) -> tuple[str, ...]:
    """Chunking names from a comma-separated list, validated, in the order given, without repeats."""
    names = [validate(part.strip()) for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError("no chunking named: give a comma-separated list such as whole,char,split")
    return tuple(dict.fromkeys(names))


def fixed_size(text: str, size: int) -> Stream:
    """The text in chunks of `size` code points (the last one shorter)."""
    return tuple(text[start : start + size] for start in range(0, len(text), size))


def two_way(text: str, cut: int) -> Stream:
    """The text split in two at code point `cut`."""
    return (text[:cut], text[cut:])


def random_sizes(text: str, seed: int) -> Stream:
    """The text in chunks of 1..RANDOM_MAX_CHUNK code points drawn from a generator seeded with `seed`."""
    rng = random.Random(seed)
    chunks: list[str] = []
    start = 0
    while start < len(text):
        size = rng.randint(1, RANDOM_MAX_CHUNK)
        chunks.append(text[start : start + size])
        start += size
    return tuple(chunks)


def streams(name: str, text: str) -> list[Stream]:
    """Every stream the chunking makes of `text`: none for `whole`, one per cut point for `split`."""
    validate(name)
    if name == "whole" or not text:
        return []
    if name == "char":
        return [fixed_size(text, 1)]
    if name == "char2":
        return [fixed_size(text, 2)]
    if name == "char3":
        return [fixed_size(text, 3)]
    if name == "split":
        return [two_way(text, cut) for cut in range(1, len(text))]
    return [random_sizes(text, int(name[len(RANDOM_PREFIX) :]))]


def boundaries(stream: Sequence[str]) -> tuple[int, ...]:
    """The code-point offset where each chunk of a stream ends."""
    return tuple(accumulate(len(chunk) for chunk in stream))


def all_boundaries(names: Sequence[str], text: str) -> tuple[int, ...]:
    """Every prefix length any of the chunkings feeds, sorted: one oracle partial read serves them all."""
    found: set[int] = set()
    for name in names:
        for stream in streams(name, text):
            found.update(boundaries(stream))
    return tuple(sorted(found))
