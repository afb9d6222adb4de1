"""Drills: a sweep stopped by a signal leaves no process and no temporary file behind (SIGINT, SIGTERM; after
SIGKILL, the next run clears them), and one killed while it writes its reports leaves them marked incomplete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatparity import cli
from chatparity.files import TEMPORARY
from chatparity.processes import children
from harness.store import REPORTS_INCOMPLETE
from tests.drill_support import QWEN3, ROOT, corpus_file, rows, snapshot
from tests.test_drill_children import program
from tests.test_drill_programs import ECHO, running

GONE_WITHIN = 30.0
"""Seconds a process left behind has to end (a bound on waiting, not a speed)."""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An oracle answer cache holding every answer the drill corpus needs."""
    directory = tmp_path_factory.mktemp("signals")
    assert cli.main(sweep_args(directory / "warm", corpus_file(directory), directory / "cache")) == 0
    return directory / "cache"


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """The TMPDIR of the sweeps of one drill."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    return directory


def sweep_args(out: Path, corpus: Path, cache: Path, *flags: str) -> list[str]:
    """The flags of a one-template sweep of `corpus` into `out`, whole replies only."""
    return ["sweep", "--corpus", str(corpus), "--templates", QWEN3, "--chunking", "whole", "--out", str(out),
            "--oracle-cache", str(cache), *flags]


INTERRUPTIBLE = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                 "sys.argv[0] = 'chatparity'; runpy.run_module('chatparity', run_name='__main__', alter_sys=True)")
"""`python3 -m chatparity` taking SIGINT as an interrupt even where this test runs with it ignored (a background
job inherits SIGINT ignored, and so would the sweep)."""


def started(args: list[str], cwd: Path, scratch: Path, **popen: object) -> subprocess.Popen[str]:
    """`python3 -m chatparity ARGS` started in the background with TMPDIR `scratch`, interruptible."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    return subprocess.Popen([sys.executable, "-c", INTERRUPTIBLE, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, env=env, **popen)  # type: ignore[call-overload]


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, as /proc shows them now."""
    found: set[int] = set()
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            mine = {int(child) for child in listing.read_text().split()}
        except OSError:
            continue
        for child in mine:
            found |= {child, *descendants(child)}
    return found


def wait_for(condition: object, what: str, within: float = 120.0) -> None:
    """Poll `condition()` until it holds."""
    limit = time.monotonic() + within
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < limit, f"waited {within:g}s for {what}"
        time.sleep(0.01)


def all_gone(pids: set[int]) -> None:
    """Every process of `pids` ends within GONE_WITHIN seconds."""
    wait_for(lambda: not any(running(pid) for pid in pids), f"processes {sorted(pids)} to end", GONE_WITHIN)


def leftovers(directory: Path) -> list[str]:
    """The temporary files and directories the harness left in `directory`."""
    return sorted(path.name for path in directory.iterdir() if path.name.startswith(TEMPORARY))


@pytest.fixture
def slow_sweep(tmp_path: Path, cache: Path, scratch: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A sweep on two workers through a parser program that takes five seconds per answer, running; and the file
    in which each start of that program writes its pid."""
    pids = tmp_path / "parser-pids"
    slow = program(tmp_path, "parser", ECHO.format(
        before="open(sys.argv[1], 'a').write(f'{os.getpid()}\\n')", each="time.sleep(5)").replace(
        "import json, sys, time", "import json, os, sys, time"))
    process = started(sweep_args(tmp_path / "run", corpus_file(tmp_path), cache, "-n", "2",
                                 "--parser", f"cmd:{slow} {pids}"), tmp_path, scratch, start_new_session=True)
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 2, "both workers' parsers to start")
    yield process, pids
    if process.poll() is None:
        process.kill()
    process.communicate()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 2)])
def test_a_signal_mid_sweep_ends_every_process_and_removes_the_temporary_files(
    tmp_path: Path, scratch: Path, slow_sweep: tuple[subprocess.Popen[str], Path], signum: int, status: int
) -> None:
    process, pids = slow_sweep
    below = descendants(process.pid) | {int(pid) for pid in pids.read_text().split()}
    assert leftovers(scratch)
    if signum == signal.SIGINT:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    out, err = process.communicate(timeout=120)
    assert process.returncode == status, out + err
    all_gone(below)
    assert leftovers(scratch) == [] and not (tmp_path / "run").exists()


def test_after_a_sigkill_workers_end_and_the_next_run_removes_the_leftovers(
    tmp_path: Path, cache: Path, scratch: Path, slow_sweep: tuple[subprocess.Popen[str], Path]
) -> None:
    process, pids = slow_sweep
    below = descendants(process.pid) | {int(pid) for pid in pids.read_text().split()}
    process.kill()
    process.communicate(timeout=60)
    all_gone(below)
    left = leftovers(scratch)
    assert any(name.startswith(f"{TEMPORARY}{process.pid}-sweep-") for name in left)
    again = started(sweep_args(tmp_path / "again", corpus_file(tmp_path), cache), tmp_path, scratch)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    assert leftovers(scratch) == []


def test_a_kill_while_reports_are_written_leaves_them_marked_and_nothing_writes_after(
    tmp_path: Path, cache: Path, scratch: Path
) -> None:
    out = tmp_path / "run"
    process = started(sweep_args(out, corpus_file(tmp_path), cache, "-n", "0"), tmp_path, scratch)
    wait_for(lambda: (out / REPORTS_INCOMPLETE).exists() and descendants(process.pid) or process.poll() is not None,
             "the forked report writer")
    below = descendants(process.pid)
    process.kill()
    process.communicate(timeout=60)
    assert below, "the sweep ended before its report writer started"
    all_gone(below)
    written = snapshot(out)
    assert REPORTS_INCOMPLETE in written and len(rows(out)) == 3
    time.sleep(2)
    assert snapshot(out) == written
    again = started(["report", str(out)], tmp_path, scratch)
    report_out, report_err = again.communicate(timeout=300)
    assert again.returncode == 0, report_out + report_err
    assert not (out / REPORTS_INCOMPLETE).exists() and leftovers(out) == [] and leftovers(scratch) == []


def test_the_process_takes_its_children_list_from_proc() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in children()
    finally:
        child.kill()
        child.wait()
