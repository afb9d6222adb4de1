"""What each profile streams: which chunkings run, and on which replies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch

from chatparity.model import Profile, Reply, profile_named


@dataclass(frozen=True)
class ChunkingRules:
    """A profile's chunkings, the longest reply (in code points) each streamed chunking runs on, and the
    chunkings that run only on replies of some origins in some modes (globs)."""

    name: str
    chunkings: tuple[str, ...]
    limits: tuple[tuple[str, int], ...] = field(default=())
    only: tuple[tuple[str, str, str], ...] = field(default=())

    def applies(self, chunking: str, reply: Reply, mode: str = "") -> bool:
        """Whether the chunking runs on this reply, in a session of this mode label, under this profile."""
        return self.for_mode(mode)(chunking, reply)

    def for_mode(self, mode: str) -> Callable[[str, Reply], bool]:
        """`applies` for the sessions of one mode label: the modes matched once, each origin once."""
        limits = dict(self.limits)
        origins = {
            name: tuple(origin for scoped, origin, modes in self.only if scoped == name and fnmatch(mode, modes))
            for name, _, _ in self.only
        }
        in_scope: dict[tuple[str, str], bool] = {}

        def applies(chunking: str, reply: Reply) -> bool:
            limit = limits.get(chunking)
            if limit is not None and len(reply.text) > limit:
                return False
            patterns = origins.get(chunking)
            if patterns is None:
                return True
            key = (chunking, reply.origin)
            found = in_scope.get(key)
            if found is None:
                found = in_scope[key] = any(fnmatch(reply.origin, origin) for origin in patterns)
            return found

        return applies

    def describe(self) -> dict[str, object]:
        """The profile as the run's stamp records it."""
        described: dict[str, object] = {
            "name": self.name,
            "chunkings": list(self.chunkings),
            "limits": dict(self.limits),
        }
        if self.only:
            described["only"] = [list(scope) for scope in self.only]
        return described


RULES = {
    Profile.QUICK: ChunkingRules(
        "quick",
        ("whole", "char", "split", "char3", "tokens", "special", "tokens:4:1"),
        (("char", 64), ("split", 20)),
        (
            ("char3", "toolcall", "*/auto"),
            ("char3", "toolcall", "*/parallel"),
            ("char3", "roundtrip", "*/parallel"),
            ("char3", "partial", "*/auto"),
            ("tokens", "toolcall", "*/parallel"),
            ("tokens", "roundtrip", "*/parallel"),
            ("special", "toolcall", "*/required"),
            ("special", "thinking", "*/none"),
            ("tokens:4:1", "toolcall", "*/auto"),
        ),
    ),
    Profile.FULL: ChunkingRules(
        "full",
        (
            "whole", "char", "char2", "char3", "split", "random:1", "random:2",
            "tokens", "special", "tokens:4:1", "tokens:4:2",
        ),
        (("split", 64),),
    ),
    Profile.SERVER: ChunkingRules("server", ("whole", "tokens")),
}


def rules_of(name: str) -> ChunkingRules:
    """The chunking rules of the profile called `name` (a ValueError listing the profiles if none)."""
    return RULES[profile_named(name)]
