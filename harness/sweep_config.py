"""A sweep's configuration: what the controller hands every worker, as one JSON file."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.profiles import ChunkingRules, rules_of

CONFIG_FILE = "sweep.json"


@dataclass(frozen=True)
class SweepConfig:
    """Everything a worker needs to plan, read and judge its sessions."""

    parser: str
    profile: str
    out: str
    parser_name: str | None = None
    chunkings: tuple[str, ...] = ()
    keep_profile_rules: bool = False
    templates: str | None = None
    family: str | None = None
    mode: str | None = None
    corpus: str | None = None
    source: str = "catalog"
    oracle_version: str | None = None
    oracle_cache: str | None = None
    oracle_export: str | None = None
    timeout: float = 30.0
    only_failing: str | None = None
    expectations: str | None = None
    selected: tuple[tuple[str, str], ...] | None = field(default=None, repr=False)
    selected_sessions: tuple[str, ...] | None = field(default=None, repr=False)

    @property
    def profile_rules(self) -> ChunkingRules:
        """The profile's chunkings and its rules of which replies each runs on; chunkings named in `chunkings`
        run on every reply instead, unless `keep_profile_rules`."""
        base = rules_of(self.profile)
        if not self.chunkings:
            return base
        if self.keep_profile_rules:
            return ChunkingRules(base.name, self.chunkings, base.limits, base.only)
        return ChunkingRules(base.name, self.chunkings)

    @property
    def chunking_rules(self) -> str:
        """Which replies the chunkings run on, as the stamp records it: 'profile' (the profile's rules) or
        'every reply' (chunkings named without keep_profile_rules)."""
        return "every reply" if self.chunkings and not self.keep_profile_rules else "profile"

    def write(self, path: Path) -> None:
        """Save as JSON."""
        path.write_text(json.dumps(asdict(self), indent=1, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> SweepConfig:
        """Load from the JSON `write` saves."""
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        data["chunkings"] = tuple(data["chunkings"])
        if data.get("selected") is not None:
            data["selected"] = tuple(tuple(pair) for pair in data["selected"])
        if data.get("selected_sessions") is not None:
            data["selected_sessions"] = tuple(data["selected_sessions"])
        return cls(**data)
