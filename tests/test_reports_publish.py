"""The report command writes every file of a run, byte-identically on a second run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reports_store_builder import StoreBuilder

from reports.commands.report import main as report_main
from reports.divergences import classify_run
from reports.failures import write_failures
from reports.runs import load_run

FILES = [
    "report.md",
    "report.html",
    "summary.md",
    "counts_by_family.csv",
    "counts_by_syntax.csv",
    "counts_by_template.csv",
    "failures.csv",
    "failure_groups.csv",
    "stream_failures.csv",
    "structure_failures.csv",
    "tables.json",
    "oracle_defects.md",
    "oracle_defects.json",
    "coverage.md",
    "coverage.csv",
    "coverage_families.csv",
    "coverage.json",
]


def a_run(directory: Path) -> Path:
    """A few rows across two templates."""
    builder = StoreBuilder(directory)
    builder.session("a.jinja", family="qwen").session("b.jinja", family="llama", syntax="xml")
    builder.row("c1", "a.jinja", "whole", "match").row("c1", "a.jinja", "char", "mismatch", "content")
    builder.row("c2", "b.jinja", "whole", "parser_timeout").row("c3", "b.jinja", "whole", "match", partial=1)
    return builder.write()


def test_report_writes_every_file_deterministically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = a_run(tmp_path / "run")
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    assert report_main([str(run), "--out", str(out_a)], "chatparity report") == 0
    assert "rows 4 read (0 in sessions the parser declines left out): match 2/4 (50.0%)" in capsys.readouterr().out
    assert report_main([str(run), "--out", str(out_b)], "chatparity report") == 0
    assert sorted(path.name for path in out_a.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (out_a / name).read_bytes() == (out_b / name).read_bytes(), name
    tables = json.loads((out_a / "tables.json").read_text())
    assert sum(record["rows"] for record in tables["counts"]["family"]) == 4
    assert tables["stamp"]["parser"] == "reply"


def test_report_defaults_to_the_run_directory(tmp_path: Path) -> None:
    run = a_run(tmp_path / "run")
    assert report_main([str(run)], "chatparity report") == 0
    assert (run / "report.html").exists() and (run / "coverage.json").exists()


def test_a_directory_without_a_store_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_main([str(tmp_path)], "chatparity report") == 2
    assert f"{tmp_path}: no run store here" in capsys.readouterr().err


def test_a_run_without_rows_still_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = StoreBuilder(tmp_path / "run").session("a.jinja", status="jinja2_error", error="boom").write()
    assert report_main([str(run)], "chatparity report") == 0
    assert "rows 0 read (0 in sessions the parser declines left out): match –" in capsys.readouterr().out
    assert "| a.jinja    | jinja2_error | boom" in (run / "coverage.md").read_text().replace(
        "nothink/none | ", ""
    )


def test_failures_written_in_pieces_are_the_file_written_at_once(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    for number in range(9):
        outcome = ("match", "mismatch", "parser_crashed")[number % 3]
        builder.row(f"c{number}", f"t{number % 2}.jinja", "whole", outcome, "content" if number % 3 == 1 else "")
        builder.row(f"c{number}", f"t{number % 2}.jinja", "char", "match", monotonic=number % 2,
                    parity_explained="holds=1" if number % 4 == 0 else "")
    verdict = classify_run(load_run(builder.write()))
    once = write_failures(tmp_path / "once.csv", verdict.rows, tmp_path, piece_rows=1000)
    lines = once.read_text().splitlines()
    assert len(lines) == 1 + 6 + 3, "a monotonic break is the parser's where its stream departs from llama.cpp's"
    for piece_rows in (1, 2, 5):
        pieces = write_failures(tmp_path / f"pieces-{piece_rows}.csv", verdict.rows, tmp_path, piece_rows)
        assert pieces.read_bytes() == once.read_bytes(), piece_rows
    empty = write_failures(tmp_path / "empty.csv", verdict.rows.iloc[:0], tmp_path)
    assert empty.read_text() == lines[0] + "\n"
