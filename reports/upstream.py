"""Whether a llama.cpp defect is already fixed on llama.cpp's master, as judged by reading master's sources
(`upstream_status.toml`: one entry per family, kind and construct checked)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

STATUS_FILE = Path(__file__).resolve().parent / "upstream_status.toml"
NOT_CHECKED = "not checked"


@cache
def checked() -> dict[tuple[str, str, str], str]:
    """Each checked family, kind and construct with its status line."""
    data = tomllib.loads(STATUS_FILE.read_text(encoding="utf-8")) if STATUS_FILE.exists() else {}
    return {
        (entry["family"], entry["kind"], entry["construct"]):
            f"{entry['status']} in {entry['checked']}: {entry['evidence']}"
        for entry in data.get("entry", [])
    }


def upstream_status(family: str, kind: str, construct: str) -> str:
    """The entry's status on llama.cpp's master: 'open …', 'fixed …', or that it was not checked."""
    found = checked().get((family, kind, construct))
    return found or f"{NOT_CHECKED} against master (no entry in reports/upstream_status.toml)"
