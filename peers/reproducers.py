"""A reproducer for each class of a peer's bugs: a few lines of Python that replay its example with the peer
alone, with the parsers, tools and settings the sweep read it with."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from chatparity.model import Session
from harness.command_parser import session_json
from peers.catalog import LAUNCHER, PEERS, PEERS_ROOT, Peer
from peers.matrix import Bug, Column
from peers.sessions import session_of
from peers.sglang import reproducer as sglang
from peers.sglang.adapter import PARSERS_FILE, read_choices
from peers.transformers import reproducer as transformers
from peers.transformers.adapter import MODELS_FILE, read_models


def sglang_settings(peer: Peer, python: Path | None, sessions: list[Session | None]) -> list[bool | None]:
    """The force_reasoning SGLang's adapter finds for each session, asked of the peer's own environment (None
    for each when it has no interpreter there or a session is gone)."""
    known = [session for session in sessions if session is not None]
    if python is None or not python.is_file() or not known:
        return [None] * len(sessions)
    lines = "".join(json.dumps(session_json(session)) + "\n" for session in known)
    done = subprocess.run(
        [str(python), str(LAUNCHER), "sglang.settings", str(peer.expectations)],
        input=lines,
        capture_output=True,
        text=True,
        check=False,
    )
    found = iter(json.loads(line) for line in done.stdout.splitlines()) if done.returncode == 0 else None
    return [next(found) if found is not None and session is not None else None for session in sessions]


def sglang_codes(
    column: Column, python: Path | None, bugs: list[Bug], sessions: list[Session | None]
) -> list[str | None]:
    """SGLang's replays, with the parsers chosen for each template."""
    choices = read_choices(PEERS_ROOT / "sglang" / "expectations" / PARSERS_FILE)
    forces = sglang_settings(PEERS["sglang"], python, sessions)
    return [
        sglang.reproducer(
            choices[bug.example.template], bug.example, session, force, bug.signature, column.version
        )
        if bug.example.template in choices
        else None
        for bug, session, force in zip(bugs, sessions, forces)
    ]


def transformers_codes(
    column: Column, python: Path | None, bugs: list[Bug], sessions: list[Session | None]
) -> list[str | None]:
    """transformers' replays, with each template's model type."""
    models = read_models(PEERS_ROOT / "transformers" / "expectations" / MODELS_FILE)
    return [
        transformers.reproducer(
            models[bug.example.template]["model_type"], bug.example, session, bug.signature, column.version
        )
        if bug.example.template in models
        else None
        for bug, session in zip(bugs, sessions)
    ]


CODES = {"sglang": sglang_codes, "transformers": transformers_codes}


def reproducers_of(column: Column, profile: str, python: Path | None) -> dict[str, str]:
    """A reproducer for each bug class of a peer whose example can be replayed with the peer alone (`python`:
    the interpreter of its environment, where settings are asked of it)."""
    make = CODES.get(column.name)
    if make is None or not column.bugs:
        return {}
    bugs = list(column.bugs.values())
    sessions = [session_of(bug.example, profile) for bug in bugs]
    return {bug.signature: code for bug, code in zip(bugs, make(column, python, bugs, sessions)) if code}
