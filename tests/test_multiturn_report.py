"""Multi-turn tables from hand-made turn rows, the known-behaviours file, the links from a sweep's reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reports_store_builder import StoreBuilder

from harness.known_divergences import KnownDivergences
from harness.multiturn_checks import Break
from harness.policies import Policies
from reports.commands.report import main as report_main
from reports.coverage import coverage
from reports.divergences import apply_expectations
from reports.multiturn import summarise, write_multiturn
from reports.runs import load_run
from reports.template_behaviours import Behaviour, BehaviourFileError, load_behaviours

DROPS = Behaviour("a.jinja", "think/*", Break.THOUGHT_DROPPED, "drops past thoughts by design")


def turn(template: str, mode: str, number: int, renderer: str = "llama.cpp", **fields: Any) -> dict[str, Any]:
    """One turn row, ok unless told otherwise."""
    row = {
        "template": template,
        "family": template.split(".")[0],
        "mode": mode,
        "loop": "tools",
        "turn": number,
        "renderer": renderer,
        "append": "ok",
        "offset": None,
        "expected": "",
        "actual": "",
        "breaks": "",
        "boundary": "ok",
        "parses": "match",
        "parser": "match",
        "note": "",
    }
    return {**row, **fields}


def loop(template: str, mode: str, broken: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Three turns under both renderers, the given turns broken the same way under both."""
    broken = broken or {}
    return [
        turn(template, mode, number, renderer, **broken.get(number, {}))
        for number in (1, 2, 3)
        for renderer in ("llama.cpp", "jinja2")
    ]


def sample_rows() -> list[dict[str, Any]]:
    """a: safe without thinking, drops thoughts with it; b: re-serialises calls at turn 2; c: cannot run."""
    dropped = {"append": "break", "offset": 146, "breaks": Break.THOUGHT_DROPPED.value, "boundary": ""}
    reserialised = {
        "append": "break",
        "offset": 2208,
        "breaks": Break.CALL_RESERIALISED.value,
        "boundary": "",
    }
    stopped = turn(
        "c.jinja",
        "nothink/auto",
        1,
        "-",
        append="stopped",
        boundary="",
        parses="",
        parser="",
        note="jinja2 cannot render the history: boom",
    )
    return [
        *loop("a.jinja", "nothink/auto"),
        *loop("a.jinja", "think/auto", {1: dropped, 2: dropped}),
        *loop("b.jinja", "nothink/auto", {2: reserialised}),
        *loop("b.jinja", "think/auto"),
        stopped,
    ]


def test_templates_are_safe_known_breaking_or_not_run() -> None:
    tables = summarise(sample_rows(), (DROPS,))
    by_name = tables.templates.set_index("template")
    assert by_name["append-safe"].to_dict() == {"a.jinja": "known", "b.jinja": "no", "c.jinja": "not run"}
    assert by_name.loc["a.jinja", "safe modes"] == "1/2"
    assert by_name.loc["a.jinja", "what breaks"] == "thought dropped from history (known)"
    assert by_name.loc["b.jinja", "first break"] == "turn 2 (nothink/auto)"
    assert "parsed calls" in by_name.loc["b.jinja", "server must"]
    assert by_name.loc["c.jinja", "stopped modes"] == 1


def test_without_the_behaviour_the_dropped_thought_is_a_break() -> None:
    tables = summarise(sample_rows(), ())
    assert tables.templates.set_index("template").loc["a.jinja", "append-safe"] == "no"


def test_mode_and_break_tables_count_loops() -> None:
    tables = summarise(sample_rows(), (DROPS,))
    modes = tables.modes.set_index("mode")
    assert modes.loc["nothink/auto"].to_dict() == {
        "templates": 3,
        "append-safe": 1,
        "known behaviours only": 0,
        "breaks": 1,
        "stopped": 1,
    }
    assert modes.loc["think/auto", "known behaviours only"] == 1
    breaks = tables.breaks.set_index("break")
    assert breaks.loc[Break.THOUGHT_DROPPED.value, "known loops"] == 1
    assert breaks.loc[Break.CALL_RESERIALISED.value, "templates"] == 1


def test_the_files_are_byte_identical_when_written_twice(tmp_path: Path) -> None:
    tables = summarise(sample_rows(), (DROPS,))
    first = [path.read_bytes() for path in write_multiturn(tables, {"parser": "reply"}, tmp_path / "one")]
    second = [path.read_bytes() for path in write_multiturn(tables, {"parser": "reply"}, tmp_path / "two")]
    assert first == second
    text = (tmp_path / "one" / "multiturn.md").read_text(encoding="utf-8")
    assert "3 templates: 0 append-safe in every mode, 1 breaking only by known behaviours, 1 breaking" in text
    data = json.loads((tmp_path / "one" / "multiturn.json").read_text(encoding="utf-8"))
    assert [row["template"] for row in data["templates"]] == ["a.jinja", "b.jinja", "c.jinja"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('template = "a.jinja"\nbreak = "thought lost"\nreason = "r"', "unknown break 'thought lost'"),
        ('template = "a.jinja"\nbreak = "stop missing"', "'reason' must be a non-empty string"),
        ('template = "a.jinja"\nbreak = "stop missing"\nreason = "r"\nkind = "x"', "unknown field 'kind'"),
    ],
)
def test_a_bad_behaviour_entry_is_named(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "behaviours.toml"
    path.write_text(
        f'[[behaviour]]\ntemplate = "ok.jinja"\nbreak = "stop missing"\nreason = "r"\n\n[[behaviour]]\n{entry}\n'
    )
    with pytest.raises(BehaviourFileError, match=rf"#2: {message}"):
        load_behaviours(path)


def test_the_committed_behaviours_load() -> None:
    behaviours = load_behaviours()
    assert behaviours
    assert all(each.reason for each in behaviours)


def test_a_sweep_report_and_its_coverage_link_the_multiturn_results(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "quick-reply")
    builder.session("a.jinja", family="qwen", syntax="xml")
    builder.row("c1", "a.jinja", "whole", "match")
    run_dir = builder.write()
    write_multiturn(summarise(sample_rows(), (DROPS,)), {"parser": "reply"}, tmp_path / "multiturn-reply")
    run = load_run(run_dir)
    covered = coverage(run, apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies()).rows)
    assert covered.templates.set_index("template").loc["a.jinja", "append-safe (multiturn)"] == "known"
    assert report_main([str(run_dir)], "chatparity report") == 0
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "[../multiturn-reply/multiturn.md](../multiturn-reply/multiturn.md)" in report
