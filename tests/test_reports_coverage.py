"""Coverage per template and family, and the list of what the parser does not handle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reports_store_builder import StoreBuilder

from harness.known_divergences import KnownDivergences
from harness.policies import Policies
from reports.commands.coverage import main as coverage_main
from reports.coverage import coverage
from reports.divergences import apply_expectations
from reports.runs import load_run


def coverage_run(directory: Path) -> Path:
    """a: two modes, one prompt difference; b: unsupported in all; c: jinja2 fails; d: unsupported in one mode."""
    builder = StoreBuilder(directory)
    builder.session("a.jinja", family="qwen", syntax="xml", mode="nothink/none")
    builder.session("a.jinja", family="qwen", syntax="xml", mode="think/auto", prompt_parity="differs@12")
    declined = {"status": "unsupported", "error": "Unsupported: xml calls"}
    builder.session("b.jinja", family="qwen", syntax="xml", **declined)
    builder.session(
        "b.jinja", family="qwen", syntax="xml", session_id="b|other", conversation="other", **declined
    )
    builder.session(
        "d.jinja", family="qwen", mode="think/none", status="unsupported", error="Unsupported: think"
    )
    builder.session("d.jinja", family="qwen", mode="nothink/none")
    builder.session(
        "c.jinja",
        family="llama",
        jinja_renders=0,
        prompt_parity="jinja2_fails: boom",
        status="jinja2_error",
        error="boom",
    )
    builder.row("c1", "a.jinja", "whole", "match", origin="roundtrip")
    builder.row("c1", "a.jinja", "char", "mismatch", "content", origin="roundtrip")
    builder.row("c2", "a.jinja", "whole", "match", mode="think/auto", origin="thinking", partial=1)
    builder.row("c3", "a.jinja", "whole", "parser_crashed", mode="think/auto", origin="thinking")
    builder.row("c4", "b.jinja", "whole", "unsupported")
    return builder.write()


def test_per_template_coverage(tmp_path: Path) -> None:
    run = load_run(coverage_run(tmp_path))
    result = coverage(run, apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies()).rows)
    a = result.templates.set_index("template").loc["a.jinja"]
    assert (a["family"], a["syntax"], a["jinja2 renders"], a["prompt parity"]) == (
        "qwen",
        "xml",
        "2/2",
        "1/2",
    )
    assert a["first parity difference"] == "differs@12"
    assert a["modes run"] == "nothink/none, think/auto"
    assert (a["cases"], a["cases by corpus"]) == (3, "roundtrip 1, thinking 2")
    assert (a["finished match"], a["partial match"], a["errors"]) == ("1/3 (33.3%)", "1/1 (100.0%)", 1)
    c = result.templates.set_index("template").loc["c.jinja"]
    assert (c["jinja2 renders"], c["cases"], c["finished match"]) == ("0/1", 0, "–")


def test_family_rollup_and_what_the_parser_does_not_handle(tmp_path: Path) -> None:
    run = load_run(coverage_run(tmp_path))
    result = coverage(run, apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies()).rows)
    qwen = result.families.set_index("family").loc["qwen"]
    assert (qwen["templates"], qwen["cases"], qwen["unsupported sessions"]) == (3, 4, 3)
    assert result.unsupported.to_dict(orient="records") == [
        {
            "template": "b.jinja",
            "at all": True,
            "sessions": "2/2",
            "modes": "nothink/none",
            "error": "Unsupported: xml calls",
        },
        {
            "template": "d.jinja",
            "at all": False,
            "sessions": "1/2",
            "modes": "think/none",
            "error": "Unsupported: think",
        },
    ]
    assert result.not_run["template"].tolist() == ["c.jinja"]


def test_coverage_command_writes_markdown_csv_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = coverage_run(tmp_path / "run")
    assert coverage_main([str(run), "--out", str(tmp_path / "out")], "chatparity coverage") == 0
    assert "## Templates and modes the parser does not handle" in capsys.readouterr().out
    assert {path.name for path in (tmp_path / "out").iterdir()} == {
        "coverage.md",
        "coverage.csv",
        "coverage_families.csv",
        "coverage.json",
    }


def test_templates_offered_tools_where_llama_cpp_reads_no_call_are_listed(tmp_path: Path) -> None:
    call = json.dumps({"content": "", "reasoning_content": "", "tool_calls": [
        {"name": "get_weather", "arguments": "{}", "id": ""}]})
    builder = StoreBuilder(tmp_path)
    builder.row("a1", "a.jinja", "whole", mode="think/auto", oracle_reading=call)
    builder.row("a1", "a.jinja", "char", mode="think/auto", oracle_reading=call)
    builder.row("r1", "refuses.jinja", "whole", mode="think/auto",
                oracle_reading=json.dumps({"rejected": "does not match"}))
    builder.row("r1", "refuses.jinja", "char", mode="think/auto", oracle_reading=call)
    builder.row("t1", "text.jinja", "whole", mode="nothink/none")
    run = load_run(builder.write())
    result = coverage(run, apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies()).rows)
    read = result.templates.set_index("template")["cases llama.cpp reads a call in"]
    assert read.to_dict() == {"a.jinja": 1, "refuses.jinja": 0, "text.jinja": 0}
    assert result.no_calls_read["template"].tolist() == ["refuses.jinja"]
