"""`chatparity peers`: install each peer in its own environment, sweep it as a `cmd:` parser with its own
expectations, sweep (or reuse) the project parser and llama.cpp against itself over the same selection, and
write the matrix (`peers.md`, `peers.html`, `peers.json`) under the output directory."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from chatparity.model import InputError
from harness.store import STORE_NAME
from peers import matrix, pages
from peers.catalog import LAUNCHER, PEERS, Peer, peers_named
from peers.install import Installed, InstallFailed, install, installed_python
from peers.reproducers import reproducers_of
from templates.upstream import cache_root

DEFAULT_OUT = Path("reports/runs/peers")
SWEEP_STATUSES = (0, 1)
"""A sweep that passes or fails on rows has stored its rows; any other status stored none."""

Sweep = Callable[[Sequence[str]], int]
Install = Callable[[Peer, Path], Installed]


def arguments(prog: str) -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument(
        "--peers",
        default=",".join(PEERS),
        help=f"peers to build, comma-separated (default: {','.join(PEERS)})",
    )
    parser.add_argument("--profile", default="quick", choices=("quick", "full"))
    parser.add_argument(
        "--templates", default="*", help="template globs, comma-separated (default: every template)"
    )
    parser.add_argument("--mode", default=None, help="mode glob, as the sweep's")
    parser.add_argument("-n", "--numprocesses", default="1", help="sweep workers (default 1)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--reply-run", type=Path, help="reuse this run of the project parser instead of sweeping it"
    )
    parser.add_argument("--oracle-run", type=Path, help="reuse this run of llama.cpp against itself")
    parser.add_argument("--timeout", default=None, help="per-call timeout of the sweeps, seconds")
    parser.add_argument(
        "--from-runs",
        action="store_true",
        help="write the matrix from the runs already under --out (no install, no sweep)",
    )
    return parser


def peer_spec(installed: Installed) -> str:
    """The `cmd:` parser spec running the peer's adapter in its own environment."""
    argv = [
        str(installed.python),
        str(LAUNCHER),
        f"{installed.peer.name}.serve",
        str(installed.peer.expectations),
    ]
    return "cmd:" + shlex.join(argv)


def sweep_argv(
    options: argparse.Namespace, spec: str, name: str, out: Path, expectations: Path | None
) -> list[str]:
    """The `chatparity sweep` arguments for one parser over the command's selection."""
    argv = [
        "--parser",
        spec,
        "--parser-name",
        name,
        "--profile",
        options.profile,
        "--templates",
        options.templates,
        "-n",
        options.numprocesses,
        "--out",
        str(out),
    ]
    if options.mode:
        argv += ["--mode", options.mode]
    if options.timeout:
        argv += ["--timeout", options.timeout]
    return argv + (["--expectations", str(expectations)] if expectations else [])


def run_sweep(argv: Sequence[str]) -> int:
    """Run `chatparity sweep` in a process of its own (its output passes through); its exit status."""
    return subprocess.run([sys.executable, "-m", "chatparity", "sweep", *argv], check=False).returncode


def swept(name: str, argv: list[str], run: Path, sweep: Sweep, templates: str) -> matrix.Column:
    """A parser's column from a sweep, or its status when the sweep stored nothing."""
    status = sweep(argv)
    if status not in SWEEP_STATUSES:
        return matrix.Column(name, status=f"sweep exited {status} (see its output above)")
    return matrix.column_of(name, run, templates)


def peer_column(
    peer: Peer, options: argparse.Namespace, sweep: Sweep, installer: Install
) -> tuple[matrix.Column, Path | None]:
    """A peer installed (one line said so) and swept, with its environment's interpreter, or its column saying
    why not."""
    try:
        installed = installer(peer, cache_root())
    except InstallFailed as why:
        print(f"{peer.key}: install failed: {why}", flush=True)
        return matrix.Column(peer.name, peer.version, status=f"install failed: {why}"), None
    how = "cached" if installed.cached else "installed"
    print(
        f"{peer.key}: {how} in {installed.home} ({installed.seconds:.0f} s, {installed.size / 2**20:.0f} MB)",
        flush=True,
    )
    run = options.out / peer.name
    argv = sweep_argv(options, peer_spec(installed), peer.name, run, peer.expectations)
    column = swept(peer.name, argv, run, sweep, options.templates)
    column.version = column.version or peer.version
    return column, installed.python


def reference_column(
    name: str, spec: str, given: Path | None, options: argparse.Namespace, sweep: Sweep
) -> matrix.Column:
    """The project parser's or llama.cpp's own column: a given run's rows of the selection, else a sweep."""
    if given is not None:
        return matrix.column_of(name, given, options.templates)
    run = options.out / name
    return swept(name, sweep_argv(options, spec, name, run, None), run, sweep, options.templates)


def stored_column(name: str, run: Path, options: argparse.Namespace) -> matrix.Column:
    """A column from a run already stored, or its status when there is none."""
    if not (run / STORE_NAME).is_file():
        return matrix.Column(name, status=f"no run stored in {run}")
    return matrix.column_of(name, run, options.templates)


def main(
    argv: list[str], prog: str = "chatparity peers", sweep: Sweep = run_sweep, installer: Install = install
) -> int:
    """Build the matrix; 0 once it is written (the peers' bugs are findings, not the command's failure)."""
    options = arguments(prog).parse_args(argv)
    try:
        peers = peers_named(options.peers)
    except ValueError as error:
        raise InputError(str(error)) from None
    if options.from_runs:
        columns = [stored_column(peer.name, options.out / peer.name, options) for peer in peers]
        pythons = {peer.name: installed_python(peer, cache_root()) for peer in peers}
        columns.append(stored_column("reply", options.reply_run or options.out / "reply", options))
        columns.append(stored_column("llama.cpp", options.oracle_run or options.out / "llama.cpp", options))
    else:
        built = [peer_column(peer, options, sweep, installer) for peer in peers]
        columns = [column for column, _ in built]
        pythons = {column.name: python for column, python in built}
        columns.append(reference_column("reply", "reply", options.reply_run, options, sweep))
        columns.append(reference_column("llama.cpp", "oracle", options.oracle_run, options, sweep))
    reproducers = {
        column.name: reproducers_of(column, options.profile, pythons.get(column.name)) for column in columns
    }
    text, data = pages.write(options.out, columns, reproducers)
    print(f"peer matrix: {text} ({text.with_suffix('.html').name}, {data.name})")
    return 0
