"""Comparing the upstream template set at a pin with the committed index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from templates.index import TemplateEntry, read_template, sha256_text


@dataclass(frozen=True)
class CheckReport:
    """Templates added upstream, removed upstream, and changed (hash mismatch) against the index."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Whether the upstream set matches the index exactly."""
        return not (self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """The report as readable lines."""
        lines = [f"added upstream (not in the index): {name}" for name in self.added]
        lines += [f"removed upstream (still in the index): {name}" for name in self.removed]
        lines += [f"changed (sha256 differs from the index): {name}" for name in self.changed]
        return lines


def check_templates(index: dict[str, TemplateEntry], directory: Path) -> CheckReport:
    """Compare the *.jinja files of an upstream templates directory with the index."""
    if not directory.is_dir():
        raise FileNotFoundError(f"upstream templates directory {directory} does not exist")
    upstream = {path.name: sha256_text(read_template(path)) for path in sorted(directory.glob("*.jinja"))}
    return CheckReport(
        added=tuple(sorted(set(upstream) - set(index))),
        removed=tuple(sorted(set(index) - set(upstream))),
        changed=tuple(
            sorted(name for name in set(upstream) & set(index) if upstream[name] != index[name].sha256)
        ),
    )
