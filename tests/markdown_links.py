"""The headings and relative links of the project's markdown files, as GitHub renders them."""

from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a markdown heading."""
    words = re.sub(r"[^\w\- ]", "", heading.lstrip("#").strip().lower())
    return words.replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """The anchors of a markdown file's headings (outside code blocks)."""
    found, fenced = set(), False
    for line in document.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            found.add(heading_anchor(line))
    return found


def relative_links(document: Path) -> list[str]:
    """The links of a markdown file that point inside the project (a file, an anchor, or both)."""
    return [target for target in LINK.findall(document.read_text(encoding="utf-8")) if "://" not in target]
