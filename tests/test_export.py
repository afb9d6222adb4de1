"""`chatparity export` and `chatparity sweep --oracle FILE`: a sweep against an export judges as a live one."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from chatparity import cli
from harness.export_file import FORMAT, VERSION
from oracle.client import BINARY_ENV

TEMPLATE = "mistralai-Mistral-Nemo-Instruct-2407.jinja"
"""A template with tool calls, thinking modes and a session none of whose replies runs at a chunking."""
SHOW = re.compile(r"`chatparity show [^`|]*`?")
"""A table's command showing a case, which names the run's directory."""


def export(out: Path) -> Path:
    """The quick profile's cases of TEMPLATE exported to `out`."""
    assert cli.main(["export", "--profile", "quick", "--templates", TEMPLATE, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One export of TEMPLATE."""
    return export(tmp_path_factory.mktemp("export") / "quick.jsonl")


def sweep(out: Path, *flags: str) -> int:
    """A quick sweep of the project parser over TEMPLATE."""
    return cli.main(["sweep", "--parser", "reply", "--templates", TEMPLATE, "--out", str(out), *flags])


def stored(run: Path, table: str) -> list[tuple[object, ...]]:
    """A run's table, in a fixed order."""
    connection = sqlite3.connect(run / "rows.sqlite")
    try:
        return connection.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()
    finally:
        connection.close()


def test_the_export_holds_a_header_a_line_per_case_and_one_per_session_without_a_case(exported: Path) -> None:
    lines = [json.loads(line) for line in exported.read_text(encoding="ascii").splitlines()]
    head, cases = lines[0], [line for line in lines[1:] if "case" in line]
    assert (head["format"], head["version"], head["profile"]) == (FORMAT, VERSION, "quick")
    assert head["llama_cpp_commit"] and head["llama_cpp_python_version"] and head["oracle_build"]
    assert cases and {line["template"] for line in lines[1:]} == {TEMPLATE}
    alone = [line for line in lines[1:] if "case" not in line]
    assert alone and all(line["answers"] and "reply" not in line for line in alone)
    streamed = next(case for case in cases if case["chunkings"].get("char"))
    stream = streamed["chunkings"]["char"][0]
    assert "".join(stream["chunks"]) == streamed["reply"]
    assert len(stream["snapshots"]) == len(stream["chunks"])
    assert "template_source" not in streamed["request"] and streamed["request"]["template_sha256"]


def test_the_same_export_twice_is_the_same_bytes(exported: Path, tmp_path: Path) -> None:
    assert export(tmp_path / "again.jsonl").read_bytes() == exported.read_bytes()


def test_a_sweep_against_the_export_stores_what_a_live_sweep_stores_without_llama_cpp(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, replayed = tmp_path / "live" / "run", tmp_path / "export" / "run"
    assert sweep(live) == 0
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "no-llama-cpp"))
    assert sweep(replayed, "--oracle", str(exported), "--no-oracle-cache") == 0
    for table in ("rows", "sessions"):
        assert stored(replayed, table) == stored(live, table)
    tables = [SHOW.sub("show", (run / "report.md").read_text()) for run in (live, replayed)]
    assert tables[0] == tables[1]


def test_a_case_the_export_lacks_is_oracle_crashed(exported: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lines = exported.read_text(encoding="ascii").splitlines(keepends=True)
    cases = [json.loads(line) for line in lines[1:]]
    replies = Counter(case.get("reply") for case in cases)
    dropped = next(index for index in range(1, len(cases))
                   if "case" in cases[index] and cases[index]["session"] == cases[index - 1]["session"]
                   and replies[cases[index]["reply"]] == 1)
    damaged = tmp_path / "lacking.jsonl"
    damaged.write_text("".join(lines[:dropped + 1] + lines[dropped + 2:]), encoding="ascii")
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "no-llama-cpp"))
    case = cases[dropped]["case"]
    assert sweep(tmp_path / "run", "--oracle", str(damaged), "--case", case) in (0, 1)
    connection = sqlite3.connect(tmp_path / "run" / "rows.sqlite")
    outcomes = connection.execute("SELECT outcome, error FROM rows WHERE case_id = ?", (case,)).fetchall()
    connection.close()
    assert outcomes and {outcome for outcome, _ in outcomes} == {"oracle_crashed"}
    assert all(f"not in the export {damaged}" in error for _, error in outcomes)


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (lambda lines: lines[:2] + ['{"session": "0a", "case"\n'] + lines[3:], ":3: (line): not JSON"),
        (lambda lines: lines[:2] + [lines[2].replace('"reply":', '"replied":')] + lines[3:], ":3: reply: missing"),
        (lambda lines: ['{"format": "something-else", "version": 1}\n'] + lines[1:], ":1: format: expected"),
        (lambda lines: [lines[0].replace(f'"version":{VERSION}', '"version":99')] + lines[1:],
         ":1: version: expected 1, got 99"),
    ],
)
def test_a_damaged_or_foreign_export_is_one_line_and_exit_2(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: object, where: str
) -> None:
    damaged = tmp_path / "damaged.jsonl"
    lines = exported.read_text(encoding="ascii").splitlines(keepends=True)
    damaged.write_text("".join(damage(lines)), encoding="ascii")  # type: ignore[operator]
    capsys.readouterr()
    assert sweep(tmp_path / "run", "--oracle", str(damaged)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"chatparity sweep: {damaged}{where}")
    assert not (tmp_path / "run" / "rows.sqlite").exists()


def test_an_export_of_another_profile_is_refused(exported: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert sweep(tmp_path / "run", "--oracle", str(exported), "--profile", "full") == 2
    assert "holds the cases of the quick profile: sweep it with --profile quick" in capsys.readouterr().err


def test_a_parser_that_runs_llama_cpp_itself_is_refused(exported: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep", "--parser", "oracle", "--oracle", str(exported), "--out", str(tmp_path)]) == 2
    assert "--parser oracle runs llama.cpp itself" in capsys.readouterr().err


def test_an_export_of_no_session_is_wrong_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "none.jsonl"
    assert cli.main(["export", "--templates", TEMPLATE, "--mode", "no-such-mode", "--out", str(out)]) == 2
    assert "no session matches the selection" in capsys.readouterr().err and not out.exists()
