"""Seeded fuzz: random interleavings of a template's markers and text, bounded in count."""

from __future__ import annotations

import random

from chatparity.model import Reply

ORIGIN = "fuzz"
DEFAULT_SEED = 20250615
MAX_PIECES = 8
EXEMPT_CHECKS = ("arguments_schema", "no_leakage")
TEXTS = (
    "Hello", " ", "\n", "\n\n", "get_weather", "Rio", '{"city": "Rio", "days": 4}', '"', "{", "}", "[", "]",
    "<", "</", ">", "東京", "=", ",", "\\",
)


def fuzz_replies(markers: tuple[str, ...], key: str, seed: int, count: int) -> list[Reply]:
    """`count` replies mixing the markers and plain text, drawn from a generator seeded by (seed, key)."""
    rng = random.Random(f"{seed}:{key}")
    pool = tuple(dict.fromkeys(m for m in markers if m)) + TEXTS
    out: list[Reply] = []
    for index in range(count):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, MAX_PIECES)))
        partial = rng.random() < 0.25
        shape = f"fuzz:seed={seed}:{index}"
        out.append(Reply(text, partial, ORIGIN, shape, None, f"rng key {seed}:{key}", EXEMPT_CHECKS))
    return out
