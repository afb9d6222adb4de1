"""Drills: the gate and diff refuse what they cannot fully read, and the gate fails a run that checked nothing."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatparity import cli
from tests.drill_support import QWEN3, corpus_file, sweep

BASELINE_FLAGS = ("--allow-pin-mismatch",)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished run."""
    directory = tmp_path_factory.mktemp("gate-run")
    out = directory / "run"
    assert sweep(out, corpus_file(directory), directory / "cache", "-n", "0") == 0
    return out


@dataclass(frozen=True)
class Done:
    """What a command gave the user: its exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


Command = Callable[..., Done]


@pytest.fixture
def chatparity(capsys: pytest.CaptureFixture[str]) -> Command:
    """Run `chatparity ARGS` as its console script does, capturing what it prints."""

    def run(*args: str) -> Done:
        status = cli.main(list(args))
        out = capsys.readouterr()
        return Done(status, out.out, out.err)

    return run


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, run: Path) -> Path:
    """A baseline written once from the run by `gate --update`."""
    directory = tmp_path_factory.mktemp("baseline") / "baseline"
    assert cli.main(["gate", "--baseline", str(directory), "--update", str(run)]) == 0
    return directory


@pytest.fixture
def baseline(tmp_path: Path, written: Path) -> Path:
    """A copy of the baseline for one test to damage."""
    return Path(shutil.copytree(written, tmp_path / "baseline"))


@pytest.fixture
def gate(chatparity: Command) -> Command:
    """`chatparity gate` of a run against a baseline."""

    def run(baseline: Path, head: Path) -> Done:
        return chatparity("gate", "--baseline", str(baseline), str(head), *BASELINE_FLAGS)

    return run


def test_the_baseline_of_a_run_passes_it(baseline: Path, run: Path, gate: Command) -> None:
    done = gate(baseline, run)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "gate: PASS", done.stdout + done.stderr


def test_a_truncated_baseline_is_refused(baseline: Path, run: Path, gate: Command) -> None:
    outcomes = baseline / "outcomes.csv"
    outcomes.write_bytes(outcomes.read_bytes()[:-7])
    done = gate(baseline, run)
    assert done.returncode == 2 and "outcomes.csv: truncated" in done.stderr


def baseline_line(header: str, **fields: str) -> str:
    """A baseline line in the file's column order: a valid row with `fields` changed."""
    valid = {"case_id": "0123456789abcdef", "outcome": "match", "chunkings": "whole", "template": QWEN3,
             "mode": "think/auto", "origin": "file:drill.jsonl", "shape": "drill"}
    return ",".join({**valid, **fields}[column] for column in header.split(","))


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"outcome": "matched"}, "field 'outcome': 'matched' is not an outcome"),
        ({"shape": "drill,extra"}, "fields, found 8"),
        ({"case_id": ""}, "field 'case_id': '' is not a case id"),
        ({"chunkings": "chars"}, "field 'chunkings': unknown chunking 'chars'"),
    ],
)
def test_a_bad_baseline_line_is_named(
    baseline: Path, run: Path, fields: dict[str, str], problem: str, gate: Command
) -> None:
    outcomes = baseline / "outcomes.csv"
    header, *lines = outcomes.read_text(encoding="utf-8").splitlines()
    count = len(lines) + 1
    with outcomes.open("a", encoding="utf-8") as file:
        file.write(baseline_line(header, **fields) + "\n")
    done = gate(baseline, run)
    assert done.returncode == 2 and f"{outcomes}:{count + 1}: " in done.stderr and problem in done.stderr


def test_a_binary_baseline_and_a_missing_stamp_are_refused(baseline: Path, run: Path, gate: Command) -> None:
    (baseline / "stamp.json").unlink()
    done = gate(baseline, run)
    assert done.returncode == 2 and "stamp.json: missing" in done.stderr
    header = (baseline / "outcomes.csv").read_bytes().splitlines()[0]
    (baseline / "outcomes.csv").write_bytes(header + b"\n\x00\xff\xfe\n")
    done = gate(baseline, run)
    assert done.returncode == 2 and "outcomes.csv:2: not UTF-8 text (byte 0xff)" in done.stderr


def test_a_stamp_without_its_pins_is_refused(baseline: Path, run: Path, gate: Command) -> None:
    (baseline / "stamp.json").write_text("{}\n", encoding="utf-8")
    done = gate(baseline, run)
    assert done.returncode == 2
    assert "stamp.json: field 'llama_cpp_commit': expected a non-empty string" in done.stderr


def test_a_run_that_lost_sweep_items_fails(tmp_path: Path, baseline: Path, run: Path, gate: Command) -> None:
    lossy = Path(shutil.copytree(run, tmp_path / "lossy"))
    connection = sqlite3.connect(lossy / "rows.sqlite")
    with connection:
        connection.execute("UPDATE stamp SET value = ? WHERE key = 'lost_items'",
                           (json.dumps(["sweep.json::x.jinja[think/auto|single]: its worker process died"]),))
    connection.close()
    done = gate(baseline, lossy)
    assert done.returncode == 1 and "LOST: the sweep lost 1 items" in done.stdout
    assert done.stdout.splitlines()[-1] == "gate: FAIL"


def test_a_missing_baseline_is_refused(tmp_path: Path, run: Path, gate: Command) -> None:
    done = gate(tmp_path / "nowhere", run)
    assert done.returncode == 2 and "no baseline here" in done.stderr


def test_a_run_that_checks_no_baseline_row_fails(baseline: Path, run: Path, gate: Command) -> None:
    outcomes = baseline / "outcomes.csv"
    header, *lines = outcomes.read_text(encoding="utf-8").splitlines()
    moved = [baseline_line(header, case_id=f"{index:016x}") for index, _ in enumerate(lines)]
    outcomes.write_text("\n".join([header, *moved]) + "\n", encoding="utf-8")
    done = gate(baseline, run)
    assert done.returncode == 1
    assert "NOTHING CHECKED: the run holds no row of the baseline" in done.stdout
    assert done.stdout.splitlines()[-1] == "gate: FAIL"


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_store_is_refused_by_gate_and_diff(
    tmp_path: Path, baseline: Path, run: Path, damage: str, gate: Command, chatparity: Command
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    store = run / "rows.sqlite"
    data = store.read_bytes()[: len(store.read_bytes()) // 3] if damage == "truncated" else b"\x13" * 9000
    (broken / "rows.sqlite").write_bytes(data)
    for done in (gate(baseline, broken), chatparity("diff", str(run), str(broken))):
        assert done.returncode == 2 and "not a readable run store" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_diff_of_runs_that_share_no_row_fails(tmp_path: Path, run: Path, chatparity: Command) -> None:
    other = tmp_path / "other"
    shutil.copytree(run, other)
    connection = sqlite3.connect(other / "rows.sqlite")
    with connection:
        connection.execute("UPDATE rows SET case_id = 'x' || case_id")
    connection.close()
    done = chatparity("diff", str(run), str(other))
    assert done.returncode == 1 and "share no row" in done.stderr
