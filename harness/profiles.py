"""Sweep profiles: which chunkings run, and on which replies, for `quick` and `full`."""

from __future__ import annotations

from dataclasses import dataclass, field

from corpora.cases import Reply


@dataclass(frozen=True)
class Profile:
    """A profile's chunkings and the longest reply (in code points) each streamed chunking runs on."""

    name: str
    chunkings: tuple[str, ...]
    limits: tuple[tuple[str, int], ...] = field(default=())

    def applies(self, chunking: str, reply: Reply) -> bool:
        """Whether the chunking runs on this reply under this profile."""
        limit = dict(self.limits).get(chunking)
        return limit is None or len(reply.text) <= limit

    def describe(self) -> dict[str, object]:
        """The profile as the run's stamp records it."""
        return {"name": self.name, "chunkings": list(self.chunkings), "limits": dict(self.limits)}


PROFILES = {
    "quick": Profile("quick", ("whole", "char", "split"), (("char", 64), ("split", 20))),
    "full": Profile(
        "full", ("whole", "char", "char2", "char3", "split", "random:1", "random:2"), (("split", 64),)
    ),
}


def profile_named(name: str) -> Profile:
    """The profile called `name`, or a ValueError listing the profiles."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}: use one of {', '.join(PROFILES)}") from None
