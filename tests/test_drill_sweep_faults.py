"""Drills: a sweep whose run directory or scratch space will not take its files, a run directory that is a
file or holds a symlink, two sweeps into one run directory, and output piped into `head`: one line naming the
path, the cause and the remedy (exit 2), and every file the sweep would have replaced byte-identical."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chatparity import cli
from harness.store import REPORTS_INCOMPLETE
from tests.drill_faults import on_full_disk
from tests.drill_support import QWEN3, ROOT, chatparity, corpus_file, rows, snapshot
from tests.test_drill_children import program
from tests.test_drill_programs import ECHO


def sweep_args(out: Path, corpus: Path, cache: Path, *flags: str) -> list[str]:
    """The flags of a one-template sweep of `corpus` into `out`, whole replies only."""
    return ["sweep", "--corpus", str(corpus), "--templates", QWEN3, "--mode", "think/auto", "--chunking", "whole",
            "--out", str(out), "--oracle-cache", str(cache), "-n", "0", *flags]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An oracle answer cache shared by this module's sweeps."""
    return tmp_path_factory.mktemp("faults-cache")


@pytest.fixture(scope="module")
def earlier(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Path:
    """A complete earlier run, reports and all."""
    directory = tmp_path_factory.mktemp("earlier")
    out = directory / "run"
    assert cli.main(sweep_args(out, corpus_file(directory), cache)) == 0
    return out


@pytest.fixture
def kept(tmp_path: Path, earlier: Path) -> Path:
    """A copy of the earlier run for a sweep to be pointed at."""
    return Path(shutil.copytree(earlier, tmp_path / "kept"))


def one_line(err: str) -> str:
    """The last line a command printed on stderr, checked to be its only complaint."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and "Traceback" not in err and "INTERNALERROR" not in err, err
    return lines[-1]


def test_a_store_that_does_not_fit_keeps_the_earlier_run(tmp_path: Path, kept: Path, cache: Path) -> None:
    before = snapshot(kept)
    done = on_full_disk(kept, 8192, *sweep_args(kept, corpus_file(tmp_path), cache))
    line = one_line(done.stderr)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{kept / 'rows.sqlite'}: " in line and "space" in line and "earlier run there is untouched" in line
    assert snapshot(kept) == before


def test_reports_that_do_not_fit_keep_the_earlier_ones_and_are_marked(kept: Path, earlier: Path) -> None:
    before = snapshot(kept)
    done = on_full_disk(kept, 8192, "report", str(kept))
    line = one_line(done.stderr)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{kept}: " in line and "space" in line and f"chatparity report {kept}" in line
    after = snapshot(kept)
    assert after.pop(REPORTS_INCOMPLETE).decode().endswith(f"`chatparity report {kept}` writes them all again.\n")
    assert after == before


def test_a_full_scratch_space_is_one_line(tmp_path: Path, kept: Path, cache: Path) -> None:
    before = snapshot(kept)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = on_full_disk(scratch, 4096, *sweep_args(kept, corpus_file(tmp_path), cache),
                        env={"TMPDIR": str(scratch)})
    line = one_line(done.stderr)
    assert done.returncode == 2, done.stdout + done.stderr
    assert line.startswith(f"chatparity sweep: {scratch}: cannot spool the rows there (database or disk is full)")
    assert line.endswith("point TMPDIR elsewhere, then sweep again")
    assert snapshot(kept) == before


def test_an_out_that_is_a_file_is_refused_before_the_sweep(tmp_path: Path, cache: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "taken"
    out.write_text("mine\n", encoding="utf-8")
    assert cli.main(sweep_args(out, corpus_file(tmp_path), cache)) == 2
    captured = capsys.readouterr()
    assert one_line(captured.err) == (f"chatparity sweep: {out}: a file stands where the run directory goes; name "
                                      "a directory (or a path that does not exist yet) with --out")
    assert "collected" not in captured.out and out.read_text(encoding="utf-8") == "mine\n"


def test_a_symlink_in_the_run_directory_is_replaced_not_followed(tmp_path: Path, kept: Path, cache: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("not a report\n", encoding="utf-8")
    (kept / "report.md").unlink()
    (kept / "report.md").symlink_to(outside)
    assert cli.main(sweep_args(kept, corpus_file(tmp_path), cache)) == 0
    assert outside.read_text(encoding="utf-8") == "not a report\n"
    assert not (kept / "report.md").is_symlink() and (kept / "report.md").stat().st_size > 100


def test_a_second_sweep_into_a_busy_run_directory_is_refused(tmp_path: Path, cache: Path) -> None:
    out, started = tmp_path / "run", tmp_path / "started"
    slow = program(tmp_path, "parser", ECHO.format(before="open(sys.argv[1], 'w').close()", each="time.sleep(1)"))
    first = subprocess.Popen([sys.executable, "-m", "chatparity",
                              *sweep_args(out, corpus_file(tmp_path), cache, "--parser", f"cmd:{slow} {started}")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        while not started.exists():
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
        second = chatparity(*sweep_args(out, corpus_file(tmp_path, name="other.jsonl"), cache), cwd=tmp_path)
    finally:
        out_text, err_text = first.communicate(timeout=300)
    assert second.returncode == 2
    assert one_line(second.stderr) == (f"chatparity sweep: {out}: another chatparity command is writing this run "
                                       "directory; wait for it to end, or name another --out")
    assert first.returncode in (0, 1), out_text + err_text
    assert {row["reply"] for row in rows(out)} == {"<think>\nHi\n</think>\n\nHello there.", "Hello.",
                                                  "Another answer."}


@pytest.mark.parametrize("command", ["sweep", "report"])
def test_output_into_a_pipe_closed_early_ends_quietly(tmp_path: Path, kept: Path, cache: Path, command: str) -> None:
    args = sweep_args(kept, corpus_file(tmp_path), cache) if command == "sweep" else ["report", str(kept)]
    (kept / "report.md").unlink()
    reader = subprocess.Popen([sys.executable, "-m", "chatparity", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert reader.stdout is not None
    reader.stdout.close()
    err = reader.stderr.read().decode() if reader.stderr is not None else ""
    assert reader.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert (kept / "report.md").stat().st_size > 100 and not (kept / REPORTS_INCOMPLETE).exists()
    assert len(rows(kept)) == 3
