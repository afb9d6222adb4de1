"""Drills: a full disk or a read-only directory costs one line naming the path, the cause and the remedy (exit
2, never 1), and leaves the files the harness would have replaced byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatparity import cli
from tests.drill_faults import in_read_only, on_full_disk
from tests.drill_support import snapshot
from tests.reports_store_builder import StoreBuilder

TEMPLATE = "Qwen-Qwen3-0.6B.jinja"


def built_run(directory: Path, cases: int) -> Path:
    """A hand-made run store of `cases` matching whole rows."""
    builder = StoreBuilder(directory)
    for index in range(cases):
        builder.row(f"{index:016x}", TEMPLATE)
    return builder.write()


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    """A baseline of a small run (one page of outcomes)."""
    directory = tmp_path / "baseline"
    assert cli.main(["gate", "--baseline", str(directory), "--update", str(built_run(tmp_path / "small", 3))]) == 0
    return directory


def one_line(err: str) -> str:
    """The one line a command printed on stderr."""
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_gate_update_on_a_full_disk_keeps_the_old_baseline(tmp_path: Path, baseline: Path) -> None:
    before = snapshot(baseline)
    bigger = built_run(tmp_path / "big", 200)
    done = on_full_disk(baseline, 1024, "gate", "--baseline", str(baseline), "--update", str(bigger),
                        "--allow-pin-mismatch")
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_line(done.stderr)
    assert str(baseline) in line and "space" in line and "unchanged" in line
    assert snapshot(baseline) == before


def test_gate_update_into_a_read_only_directory_is_one_line(tmp_path: Path, baseline: Path) -> None:
    before = snapshot(baseline)
    done = in_read_only(baseline, "gate", "--baseline", str(baseline), "--update",
                        str(built_run(tmp_path / "other", 5)), "--allow-pin-mismatch")
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_line(done.stderr)
    assert str(baseline) in line and ("read-only" in line or "permission" in line) and "unchanged" in line
    assert snapshot(baseline) == before
