"""Sweeps of the parser at git revisions: a worktree for a committed revision, the sweep run inside it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


class RevisionError(Exception):
    """A revision that could not be checked out or swept."""


def _git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return its stdout, raising RevisionError with git's message on failure."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RevisionError(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout.strip()


def repository_root(start: Path) -> Path:
    """The top of the git repository holding `start`."""
    return Path(_git(start, "rev-parse", "--show-toplevel"))


def run_name(revision: str | None) -> str:
    """A directory name for the run of a revision ('worktree' for the working tree)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", revision) if revision else "worktree"


def sweep_in(tree: Path, out: Path, sweep_args: list[str]) -> Path:
    """Run `python -m chatparity sweep SWEEP_ARGS --out OUT` with the code of `tree`; return OUT."""
    environment = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(part for part in (str(tree), os.environ.get("PYTHONPATH", "")) if part),
    )
    command = [sys.executable, "-m", "chatparity", "sweep", *sweep_args, "--out", str(out)]
    done = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True, check=False)
    stored = done.returncode == 1 and (out / "rows.sqlite").is_file()
    if done.returncode != 0 and not stored:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
        raise RevisionError(
            f"the sweep failed in {tree} (exit {done.returncode}): {' '.join(command)}\n{tail}"
        )
    return out


def sweep_at(repo: Path, revision: str | None, out: Path, sweep_args: list[str]) -> Path:
    """Sweep the parser at a committed revision (in a temporary worktree) or, for None, in the working tree.

    Both sweeps run as the same user, so they share the oracle build and answer cache (~/.cache/chatparity).
    """
    out = out.resolve()
    if revision is None:
        return sweep_in(repo, out, sweep_args)
    commit = _git(repo, "rev-parse", "--verify", f"{revision}^{{commit}}")
    tree = Path(tempfile.mkdtemp(prefix=f"chatparity-{run_name(revision)}-")) / "tree"
    _git(repo, "worktree", "add", "--detach", str(tree), commit)
    try:
        return sweep_in(tree, out, sweep_args)
    finally:
        _git(repo, "worktree", "remove", "--force", str(tree))
        tree.parent.rmdir()
