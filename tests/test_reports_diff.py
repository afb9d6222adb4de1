"""The diff finds planted regressions, fixes, kind changes, new and gone rows, and refuses unpinned runs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from reports_store_builder import MISMATCH_READ, StoreBuilder

from harness.outcome_labels import label_outcome
from reports.commands.diff import main as diff_main
from reports.diff import Change, PinMismatch, change_counts, diff_json, diff_markdown, diff_runs
from reports.runs import load_run

REPO = Path(__file__).resolve().parents[1]


def run_with(directory: Path, outcomes: dict[str, tuple[str, str]], **stamp: str) -> Path:
    """A run of whole rows (case -> (outcome, kind)) of a.jinja, or of b.jinja for cases named b*."""
    builder = StoreBuilder(directory)
    builder.stamp.update(stamp)
    builder.session("a.jinja", family="qwen").session("b.jinja", family="llama")
    for case, (outcome, kind) in outcomes.items():
        builder.row(case, "b.jinja" if case.startswith("b") else "a.jinja", "whole", outcome, kind)
    return builder.write()


BASE = {
    "a1": ("match", ""),
    "a2": ("mismatch", "content"),
    "a3": ("mismatch", "calls"),
    "a4": ("match", ""),
    "b1": ("match", ""),
    "b2": ("match", ""),
}
HEAD = {
    "a1": ("mismatch", "calls"),
    "a2": ("match", ""),
    "a3": ("mismatch", "reasoning"),
    "a4": ("match", ""),
    "b1": ("parser_crashed", ""),
    "b3": ("mismatch", "content"),
}


def planted(tmp_path: Path):
    """The diff of the planted base and head runs."""
    return diff_runs(load_run(run_with(tmp_path / "base", BASE)), load_run(run_with(tmp_path / "head", HEAD)))


def test_planted_changes_are_found(tmp_path: Path) -> None:
    diff = planted(tmp_path)
    assert diff.of(Change.REGRESSION)["case_id"].tolist() == ["a1", "b1"]
    assert diff.of(Change.FIX)["case_id"].tolist() == ["a2"]
    changed = diff.of(Change.KIND_CHANGE).iloc[0]
    assert (changed["case_id"], label_outcome(changed["base"]), label_outcome(changed["head"])) == (
        "a3",
        "mismatch:calls",
        "mismatch:reasoning",
    )
    assert diff.of(Change.NEW)["case_id"].tolist() == ["b3"]
    assert diff.of(Change.GONE)["case_id"].tolist() == ["b2"]
    assert diff.of(Change.SAME)["case_id"].tolist() == ["a4"]


def test_counts_per_family_are_counts_not_ratios(tmp_path: Path) -> None:
    counts = change_counts(planted(tmp_path), "family").set_index("family")
    assert counts.loc["qwen"].tolist() == [1, 1, 1, 0, 0, 0]
    assert counts.loc["llama"].tolist() == [1, 0, 0, 0, 1, 1]


def test_markdown_shows_top_rows_and_the_rest_as_a_count(tmp_path: Path) -> None:
    text = diff_markdown(planted(tmp_path), "base", "head", "https://ci.test/report", top=1)
    assert "### Regressions (2)" in text and "…and 1 others." in text
    assert "mismatch:calls" in text and "Full report: https://ci.test/report" in text
    assert "### New rows that fail (1)" in text and "### Fixes (1)" in text
    (fixed,) = [line for line in text.splitlines() if "| a2 " in line]
    assert [cell.strip() for cell in fixed.split("|")[6:9]] == [
        f"mismatch:content{MISMATCH_READ}", "match", "content @3: 'lo' vs ''"]
    assert "### Per template (2 with changes)" in text


def test_json_lists_every_changed_row(tmp_path: Path) -> None:
    data = json.loads(json.dumps(diff_json(planted(tmp_path), "base", "head")))
    assert data["counts"]["regression"] == 2 and data["counts"]["same"] == 1
    assert sorted(row["case_id"] for row in data["rows"]) == ["a1", "a2", "a3", "b1", "b2", "b3"]
    assert {row["family"]: row["regression"] for row in data["per_family"]} == {"llama": 1, "qwen": 1}


def test_runs_with_other_pins_are_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = run_with(tmp_path / "base", BASE)
    head = run_with(tmp_path / "head", HEAD, llama_cpp_commit="other")
    with pytest.raises(PinMismatch, match="llama_cpp_commit"):
        diff_runs(load_run(base), load_run(head))
    assert diff_main([str(base), str(head)], "chatparity diff") == 2
    assert "--allow-pin-mismatch" in capsys.readouterr().err
    out = tmp_path / "diff.json"
    assert (
        diff_main([str(base), str(head), "--allow-pin-mismatch", "--json", str(out)], "chatparity diff") == 1
    )
    assert "WARNING" in capsys.readouterr().err
    assert json.loads(out.read_text())["warnings"]


FAKE_SWEEP = """
import argparse, json, sys
from pathlib import Path
from chatparity.model import Row
from harness.store import connect, write_records, write_stamp
args = argparse.ArgumentParser()
args.add_argument("command"); args.add_argument("--out"); args.add_argument("--profile")
ns = args.parse_args(sys.argv[1:])
outcome = Path("outcome.txt").read_text().strip()
connection = connect(Path(ns.out))
write_stamp(connection, {"llama_cpp_commit": "c", "template_index_hash": "h", "profile": ns.profile})
row = Row(**dict.fromkeys(("session_id", "template", "family", "syntax", "mode", "tools", "conversation",
                          "origin", "shape"), "t"),
          case_id="c1", chunking="whole", partial=0, outcome=outcome, kind="calls" if outcome == "mismatch" else "")
write_records(connection, [row])
"""


def git(repo: Path, *args: str) -> None:
    """Run git in the throwaway repository."""
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def test_diff_git_sweeps_two_revisions_in_a_worktree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    for package in ("harness", "chatparity"):
        (repo / package).mkdir(parents=True)
        (repo / package / "__init__.py").write_text("")
    shutil.copy(REPO / "harness" / "store.py", repo / "harness" / "store.py")
    shutil.copy(REPO / "chatparity" / "model.py", repo / "chatparity" / "model.py")
    shutil.copy(REPO / "chatparity" / "files.py", repo / "chatparity" / "files.py")
    (repo / "chatparity" / "__main__.py").write_text(FAKE_SWEEP)
    (repo / "outcome.txt").write_text("match")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    (repo / "outcome.txt").write_text("mismatch")
    git(repo, "commit", "-qam", "head")
    report = tmp_path / "diff.json"
    argv = [
        "--git",
        "HEAD~1",
        "HEAD",
        "--repo",
        str(repo),
        "--work",
        str(tmp_path / "runs"),
        "--profile",
        "quick",
        "--json",
        str(report),
    ]
    assert diff_main(argv, "chatparity diff") == 1
    assert json.loads(report.read_text())["counts"]["regression"] == 1
    assert "### Regressions (1)" in capsys.readouterr().out
    (repo / "outcome.txt").write_text("match")
    assert (
        diff_main(
            ["--git", "HEAD", "--repo", str(repo), "--work", str(tmp_path / "again"), "--json", str(report)],
            "chatparity diff",
        )
        == 0
    )
    assert json.loads(report.read_text())["counts"]["fix"] == 1
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True, check=True
    )
    assert len(listed.stdout.splitlines()) == 1


def test_diff_exits_1_on_regressions_only(tmp_path: Path) -> None:
    base = run_with(tmp_path / "base", BASE)
    assert diff_main([str(base), str(run_with(tmp_path / "head", HEAD))], "chatparity diff") == 1
    assert diff_main([str(base), str(run_with(tmp_path / "same", BASE))], "chatparity diff") == 0


def test_runs_of_different_parsers_are_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = run_with(tmp_path / "base", BASE)
    head = run_with(tmp_path / "head", BASE, parser="cmd:node mine.mjs")
    assert diff_main([str(base), str(head)], "chatparity diff") == 2
    assert "--allow-other-parser" in capsys.readouterr().err
    assert diff_main([str(base), str(head), "--allow-other-parser"], "chatparity diff") == 0
    assert "WARNING: the base run is of parser 'reply', the run of 'cmd:node mine.mjs'" in capsys.readouterr().err


def test_a_mismatch_that_reads_otherwise_with_the_same_kind_is_a_regression(tmp_path: Path) -> None:
    base = StoreBuilder(tmp_path / "base").row("a1", "a.jinja", outcome="mismatch", kind="content").write()
    other = json.dumps({"content": "Help", "reasoning_content": "", "tool_calls": []})
    head = StoreBuilder(tmp_path / "head").row(
        "a1", "a.jinja", outcome="mismatch", kind="content", parser_reading=other).write()
    same = StoreBuilder(tmp_path / "same").row("a1", "a.jinja", outcome="mismatch", kind="content").write()
    changed = diff_runs(load_run(base), load_run(head))
    assert changed.of(Change.REGRESSION)["case_id"].tolist() == ["a1"]
    assert label_outcome(changed.rows["base"][0]) == label_outcome(changed.rows["head"][0]) == "mismatch:content"
    assert diff_runs(load_run(base), load_run(same)).of(Change.SAME)["case_id"].tolist() == ["a1"]
