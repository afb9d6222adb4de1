"""A peer installed at its pinned version into a virtual environment of its own under the cache
(`~/.cache/chatparity/peers/NAME-VERSION/`), never into the project's; built once, then reused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from peers.catalog import Peer

MARKER = "chatparity-peer.json"
"""Written last into a finished environment: its peer, version, steps, install seconds and size."""

Run = Callable[[Sequence[str]], None]


class InstallFailed(Exception):
    """A peer that could not be installed: one line saying why."""


@dataclass(frozen=True)
class Installed:
    """A peer's finished environment: its interpreter, and what the install took."""

    peer: Peer
    home: Path
    seconds: float
    size: int
    cached: bool

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.home / "bin" / "python"


def peers_home(cache: Path) -> Path:
    """Where peers' environments live under the chatparity cache."""
    return cache / "peers"


def installed_python(peer: Peer, cache: Path) -> Path | None:
    """The interpreter of the peer's finished environment (None when it is not installed)."""
    home = peers_home(cache) / peer.key
    return home / "bin" / "python" if (home / MARKER).is_file() else None


def run_command(argv: Sequence[str]) -> None:
    """Run one install command; InstallFailed with its last line of output when it fails."""
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise InstallFailed(f"{' '.join(argv[:6])} … exited {done.returncode}: {lines[-1] if lines else ''}")


def size_of(path: Path) -> int:
    """The bytes of the files under a directory."""
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file() and not item.is_symlink())


def install(peer: Peer, cache: Path, run: Run = run_command) -> Installed:
    """The peer's environment, built in a scratch directory beside it and renamed into place once every step
    passed (so a failed or interrupted install leaves nothing that looks finished)."""
    home = peers_home(cache) / peer.key
    marker = home / MARKER
    if marker.is_file():
        facts = json.loads(marker.read_text(encoding="utf-8"))
        return Installed(peer, home, float(facts["seconds"]), int(facts["size"]), cached=True)
    scratch = home.with_name(f"{peer.key}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        run([sys.executable, "-m", "venv", str(scratch)])
        for step in peer.steps:
            run(
                [
                    str(scratch / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    *step,
                ]
            )
    except InstallFailed:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    seconds = time.monotonic() - started
    size = size_of(scratch)
    facts = {
        "peer": peer.name,
        "version": peer.version,
        "steps": peer.steps,
        "seconds": round(seconds, 1),
        "size": size,
    }
    (scratch / MARKER).write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(home, ignore_errors=True)
    scratch.rename(home)
    return Installed(peer, home, seconds, size, cached=False)
