"""Real environment faults for the drills: a `chatparity` command run where one directory is full or read-only.

Where the kernel lets a user make a mount namespace of its own (`unshare`), the directory is a small tmpfs
filled to the last page, or a read-only bind mount, that vanish with the command. Elsewhere the command runs
under a file-size limit (each write past it fails, as on a full disk), or with the directory's write permission
taken away (which binds a user that is not root).
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.drill_support import ROOT

FILLER = "chatparity-drill-filler"


@functools.cache
def namespaces() -> bool:
    """Whether this process may make a user and mount namespace and mount a tmpfs in it."""
    try:
        done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                               "mount -t tmpfs -o size=4k tmpfs /mnt"], capture_output=True, timeout=30,
                              check=False)
    except OSError:
        return False
    return done.returncode == 0


@dataclass(frozen=True)
class Done:
    """What the command gave: its exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def command_line(args: tuple[str, ...]) -> str:
    """The shell words of `python3 -m chatparity ARGS`, its output kept in out.txt and err.txt."""
    return shlex.join([sys.executable, "-m", "chatparity", *args]) + " > out.txt 2> err.txt"


def run(lines: list[str], cwd: Path, namespace: bool, env: dict[str, str] | None) -> Done:
    """Run shell lines (in a namespace of its own when `namespace`) that set `status` to the command's exit
    status, this checkout first on the command's path; then what the command printed."""
    environment = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    shell = ["sh", "-c", "\n".join([*lines, "exit $status"])]
    argv = ["unshare", "--user", "--map-root-user", "--mount", *shell] if namespace else shell
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=environment, timeout=600, check=False)
    assert done.stdout == "" and done.stderr == "", done.stdout + done.stderr
    read = functools.partial(Path.read_text, encoding="utf-8")
    return Done(done.returncode, read(cwd / "out.txt"), read(cwd / "err.txt"))


def on_full_disk(directory: Path, room: int, *args: str, env: dict[str, str] | None = None) -> Done:
    """`chatparity ARGS` where `directory` (its files kept) has `room` bytes left: a tmpfs holding a copy of its
    files and a filler that leaves that much (in whole pages), its files copied back after; else a limit of
    `room` bytes on each file the command writes."""
    where, seed = shlex.quote(str(directory)), shlex.quote(str(directory.with_name(directory.name + ".seed")))
    if not namespaces():
        limit = f"(trap '' XFSZ; ulimit -f {max(room // 512, 1)}; exec {command_line(args)}); status=$?"
        return run([limit], directory.parent, False, env)
    lines = [
        f"cp -a {where} {seed}",
        f"mount -t tmpfs -o size={tree_size(directory) + room + (1 << 16)} tmpfs {where}",
        f"cp -a {seed}/. {where}/ && rm -rf {seed}",
        f"dd if=/dev/zero of={where}/{FILLER} bs=4096 2>/dev/null",
        f"truncate -s -{room} {where}/{FILLER}",
        f"{command_line(args)}; status=$?",
        f"rm {where}/{FILLER} && cp -a {where} {seed} && umount {where}",
        f"find {where} -mindepth 1 -delete && cp -a {seed}/. {where}/ && rm -rf {seed}",
    ]
    return run(lines, directory.parent, True, env)


def in_read_only(directory: Path, *args: str, env: dict[str, str] | None = None) -> Done:
    """`chatparity ARGS` where `directory` is read-only: a read-only bind mount of it, else its write permission
    taken away while the command runs."""
    where = shlex.quote(str(directory))
    if namespaces():
        lines = [f"mount --bind {where} {where} && mount -o remount,bind,ro {where}",
                 f"{command_line(args)}; status=$?"]
        return run(lines, directory.parent, True, env)
    lines = [f"chmod -R a-w {where}", f"{command_line(args)}; status=$?", f"chmod -R u+w {where}"]
    return run(lines, directory.parent, False, env)


def tree_size(directory: Path) -> int:
    """The bytes of every file under `directory`, each in whole pages, and a page more."""
    pages = sum(-(-path.stat().st_size // 4096) for path in directory.rglob("*") if path.is_file())
    return (pages + 1) * 4096
