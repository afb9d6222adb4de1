"""Verdicts fair to any parser: expectations named by the stamp, rows beyond them, JUnit XML, step summary,
and `chatparity show` of one case."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd
import pytest
from reports_store_builder import MISMATCH_READ, StoreBuilder

from chatparity.cli import main as cli
from corpora import catalog
from harness.command_parser import session_json
from harness.outcome_labels import failing_label, reading_digest, row_label, structural_breaks
from harness.parser_specs import PROJECT_EXPECTATIONS, PROJECT_ROOT
from reports.ci import append_step_summary, exit_status, junit_xml
from reports.divergences import classify_run
from reports.expectations import Expectations, ParserMismatch, check_same_parser, expectations_of
from reports.judgement import judge
from reports.runs import load_run
from reports.show import Request, request_lines
from reports.statuses import (
    STRUCTURAL_CHECKS,
    failing_mask,
    plain_rows,
    run_labels,
    status_column,
    structural_break_mask,
)


def run_with(tmp_path: Path, parser: str = "cmd:./mine", expectations: str | None = None) -> Path:
    """A run of a parser with one mismatch, one broken stream check, one match and one unsupported session."""
    builder = StoreBuilder(tmp_path / "run")
    builder.stamp = {**builder.stamp, "parser": parser, "expectations": expectations}
    builder.row("c1", "a.jinja", "whole", "mismatch", "content")
    builder.row(
        "c1", "a.jinja", "char", "match", clean=0, snapshot_parity=0, stream_detail="clean: content shows '<x>'"
    )
    builder.row("c2", "a.jinja", "char", "match", monotonic=0, stream_detail="llama.cpp's own stream retracts")
    builder.row("c2", "a.jinja", "whole", "match")
    builder.session("u.jinja", status="unsupported", error="not mine")
    builder.row("c3", "u.jinja", "whole", "unsupported")
    return builder.write()


def test_the_stamp_names_the_expectations_and_oracle_has_none() -> None:
    assert expectations_of({"parser": "oracle", "expectations": None}) == Expectations(None)
    assert expectations_of({"parser": "cmd:x", "expectations": "/e"}).divergences is None
    assert expectations_of({"parser": "cmd:x", "expectations": "/e"}).baseline("quick") == Path("/e/baseline")
    assert expectations_of({"parser": "cmd:x", "expectations": "/e"}).baseline("full") == Path("/e/baseline-full")
    assert expectations_of({"parser": "reply"}).directory == PROJECT_ROOT / PROJECT_EXPECTATIONS
    assert expectations_of({"parser": "x", "expectations": "no/such"}).directory == PROJECT_ROOT / "no/such"


def test_a_run_without_expectations_gets_no_known_divergences(tmp_path: Path) -> None:
    run = load_run(run_with(tmp_path, parser="oracle"))
    verdict = classify_run(run)
    assert set(verdict.rows["status"]) == {"mismatch", "match", "unsupported"} and not verdict.stale


def test_rows_failing_the_run_are_the_failures_the_baseline_does_not_record(tmp_path: Path) -> None:
    run = load_run(run_with(tmp_path))
    verdict = classify_run(run)
    found = judge(run, verdict, None).failures
    assert sorted(zip(found["case_id"], found["chunking"], found["head"])) == [
        ("c1", "char", "match !clean,snapshot_parity"),
        ("c1", "whole", f"mismatch:content{MISMATCH_READ}"),
    ]
    recorded = pd.DataFrame(
        [("c1", "whole", f"mismatch:content{MISMATCH_READ}"), ("c1", "char", "match")],
        columns=["case_id", "chunking", "outcome"],
    )
    judged = judge(run, verdict, recorded)
    left = judged.failures
    assert list(zip(left["case_id"], left["chunking"], left["base"])) == [("c1", "char", "match")]
    assert exit_status(judged) == 1
    recorded.loc[1, "outcome"] = "match !clean,snapshot_parity"
    assert exit_status(judge(run, verdict, recorded)) == 0


def row(outcome: str, kind: str = "", explained: str = "", reading: str = "", **checks: object) -> object:
    """A row as labels read it: every column set, stream and structural checks as given (else unknown)."""
    names = ["consistent", "monotonic", "clean", "snapshot_parity", "clean_breaks", "parity_breaks",
             *STRUCTURAL_CHECKS, *(f"oracle_{check}" for check in STRUCTURAL_CHECKS)]
    values = {name: checks.get(name) for name in names}
    return type("Row", (), {"outcome": outcome, "kind": kind, "explained": explained, "parser_reading": reading,
                            "parity_explained": checks.get("parity_explained", ""), **values})()


def test_labels_name_the_policy_the_defect_or_the_bug_and_the_checks_the_parser_breaks() -> None:
    reading = '{"content": "x"}'
    assert row_label(row("mismatch", "calls")) == "mismatch:calls"
    assert row_label(row("mismatch", "calls", reading=reading, clean=0)) == (
        f"mismatch:calls @{reading_digest(reading)} !clean"
    )
    assert row_label(row("mismatch", "calls", "holds-marker-starts+closes")) == "policy:holds-marker-starts+closes"
    assert row_label(row("mismatch", "calls", "llama.cpp:stale_view")) == "llama.cpp:stale_view"
    assert row_label(row("match", reading=reading)) == "match"
    assert row_label(row("match", clean=0, snapshot_parity=0, parity_breaks=2)) == "match !clean,snapshot_parity=2"
    assert row_label(row("match", monotonic=0)) == "match", "a stream that is llama.cpp's own inherits its faults"
    assert row_label(row("match", monotonic=0, parity_explained="x=1")) == "match !monotonic"
    assert row_label(row("mismatch", "calls", "closes", arguments_schema=0)) == "policy:closes"
    assert row_label(row("mismatch", "calls", "closes", problems_agree=0)) == "policy:closes !problems_agree"


def checked_rows(count: int) -> pd.DataFrame:
    """Rows with every mix of broken, held and unknown checks on both sides, string columns as a store loads
    them (pandas strings, NaN where NULL), over more than one batch of plain_rows."""
    values = [0.0, 1.0, float("nan")]
    frame = {
        "outcome": pd.Series(["match", "mismatch", "mismatch", "parser_crashed"] * (count // 4), dtype="str"),
        "kind": pd.Series(["", "calls", "content", ""] * (count // 4), dtype="str"),
        "explained": pd.Series(["", "", "holds", "", "llama.cpp:stale_view", ""] * (count // 6) + [""] * (count % 6),
                               dtype="str"),
        "parity_explained": pd.Series(["", "", "", "holds=2", "", ""] * (count // 6) + [""] * (count % 6),
                                      dtype="str"),
        "parser_reading": pd.Series(['{"content": "x"}', None, "", '{"content": "y"}'] * (count // 4), dtype="str"),
    }
    names = ["consistent", "monotonic", "clean", "snapshot_parity", "clean_breaks", "parity_breaks",
             *STRUCTURAL_CHECKS, *(f"oracle_{check}" for check in STRUCTURAL_CHECKS)]
    for step, name in enumerate(names):
        frame[name] = [values[(i // 3 ** (step % 9)) % 3] for i in range(count)]
    rows = pd.DataFrame(frame)
    return rows.assign(status=status_column(rows))


def test_labels_and_failing_masks_read_every_row_as_row_by_row_reading_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reports.statuses.PLAIN_BATCH", 1000)
    rows = checked_rows(4008)
    by_row = [row_label(row) for row in rows.itertuples()]
    assert run_labels(rows) == by_row and len(set(by_row)) > 50
    assert list(failing_mask(rows)) == [failing_label(label) for label in by_row]
    assert list(structural_break_mask(rows)) == [bool(structural_breaks(row)) for row in rows.itertuples()]
    assert structural_break_mask(rows).any() and not structural_break_mask(rows).all()
    without_oracle = rows.drop(columns=[f"oracle_{STRUCTURAL_CHECKS[0]}"])
    assert list(structural_break_mask(without_oracle)) == [
        bool(structural_breaks(row)) for row in without_oracle.itertuples()
    ]
    plain = list(plain_rows(rows, ["kind", "no_such", "clean"]))
    assert plain[0]._fields == ("kind", "clean") and len(plain) == len(rows)
    pd.testing.assert_frame_equal(pd.DataFrame(plain).astype({"kind": "str"}), rows[["kind", "clean"]])


def test_runs_of_different_parsers_are_refused_unless_allowed() -> None:
    with pytest.raises(ParserMismatch, match="--allow-other-parser"):
        check_same_parser({"parser": "reply"}, {"parser": "cmd:x"}, "the baseline", allow=False)
    assert check_same_parser({"parser": "reply"}, {"parser": "cmd:x"}, "the baseline", allow=True)
    assert check_same_parser({"parser": "reply"}, {"parser": "reply"}, "the baseline", allow=False) == []


def test_junit_has_a_test_case_per_session_with_failures_counted(tmp_path: Path) -> None:
    run = load_run(run_with(tmp_path))
    judged = judge(run, classify_run(run), None)
    text = junit_xml(run, judged)
    root = ElementTree.fromstring(text)
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("2", "1", "1")
    failing = root.find(".//testcase[@classname='a.jinja']")
    assert failing is not None and failing.get("name") == "nothink/none|plain"
    failure = failing.find("failure")
    assert failure is not None and failure.get("message") == "2 rows fail against the parser's expectations"
    assert "chatparity show c1" in (failure.text or "") and "match !clean," in (failure.text or "")
    assert text == junit_xml(run, judged)


def test_the_step_summary_is_appended_only_where_github_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert append_step_summary("## x") is None
    target = tmp_path / "summary.md"
    target.write_text("earlier\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    assert append_step_summary("## run\n") == target
    assert target.read_text(encoding="utf-8") == "earlier\n## run\n"


def test_show_prints_the_case_readings_and_a_replay_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_with(tmp_path)
    assert cli(["show", "c1", str(run)]) == 0
    out = capsys.readouterr().out
    assert "template     a.jinja (family fam, syntax json)" in out
    assert "  whole      mismatch:content  content @3: 'lo' vs ''" in out
    assert "  char       match  [consistent ok, monotonic ok, clean BROKEN, snapshot_parity BROKEN]" in out
    assert '"content": "Hel"' in out and "first difference: content @3" in out
    assert "chatparity sweep --parser cmd:./mine --profile quick --templates a.jinja" in out
    assert "--case c1" in out and "chatparity show c1 /tmp/chatparity-replay/c1" in out


def test_show_prints_the_settings_and_messages_the_parser_receives() -> None:
    sessions = [planned.session for planned in catalog.plan("quick", templates="Qwen-Qwen3-0.6B.jinja")]
    assert {session.enable_thinking for session in sessions} == {True, False}
    for session in sessions:
        sent = session_json(session)
        lines = request_lines(Request.of(session))
        settings = json.loads(lines[0])
        assert settings == {key: sent[key] for key in settings}
        assert set(settings) == {
            "tool_choice", "parallel_tool_calls", "enable_thinking", "chat_template_kwargs", "reasoning_format"
        }
        messages = lines[lines.index("  messages:") + 1 : lines.index(f"  tools ({len(sent['tools'])}):")]
        assert [json.loads(line) for line in messages] == sent["messages"]
        if not session.enable_thinking and not session.chat_template_kwargs:
            assert '"enable_thinking": false, "chat_template_kwargs": {}' in lines[0]


def test_show_names_an_unknown_case_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["show", "c9", str(run_with(tmp_path))]) == 2
    assert "no case 'c9' in this run" in capsys.readouterr().err


def test_the_command_line_has_a_version_and_examples_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["--version"]) == 0
    assert "llama.cpp 0c1e57098" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli(["show", "--help"])
    assert "examples:\n  chatparity show" in capsys.readouterr().out


def test_a_junitxml_in_pytest_args_is_written_over_by_the_sweeps_own() -> None:
    from reports.commands.sweep import junit_target

    assert junit_target(None, "-x --junitxml=out/j.xml") == Path("out/j.xml")
    assert junit_target(None, "--junit-xml out/k.xml") == Path("out/k.xml")
    assert junit_target(Path("mine.xml"), "--junitxml=out/j.xml") == Path("mine.xml")
    assert junit_target(None, "-x") is None


def test_show_names_the_structural_checks_each_reading_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = StoreBuilder(tmp_path / "run")
    builder.row(
        "c4", "a.jinja", "whole", "mismatch", "calls", arguments_schema=0,
        structure_detail="arguments_schema: get_weather: 'city' is a required property", oracle_no_leakage=0,
    )
    assert cli(["show", "c4", str(builder.write())]) == 0
    out = capsys.readouterr().out
    assert (
        "[parser breaks arguments_schema: get_weather: 'city' is a required property; llama.cpp breaks no_leakage]"
    ) in out
