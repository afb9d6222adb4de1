"""End to end: `chatparity sweep` over a small hand-made corpus, with llama.cpp as the oracle."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import sweep_command, sweep_plugin
from oracle.client import Oracle
from reports.baselines import read_baseline, update, write_baseline
from reports.ci import exit_status, sweep_judgement
from reports.commands.diff import main as diff_main
from reports.commands.gate import main as gate_main
from reports.divergences import classify_run
from reports.gate import check
from reports.runs import load_run

TESTS = Path(__file__).resolve().parent
QWEN3 = "Qwen-Qwen3-0.6B.jinja"
LLAMA31 = "meta-llama-Llama-3.1-8B-Instruct.jinja"
PARSERS = f"{TESTS / 'sweep_parsers.py'}:"
EXAMPLE = f"cmd:{sys.executable} {TESTS / 'sweep_example_parser.py'}"

Sweep = Callable[..., tuple[int, Path]]


def table(out: Path, name: str) -> list[dict[str, Any]]:
    """A stored table's rows as dicts, in key order."""
    connection = sqlite3.connect(out / "rows.sqlite")
    connection.row_factory = sqlite3.Row
    order = {"rows": "case_id, chunking", "sessions": "session_id", "stamp": "key"}[name]
    try:
        return [dict(row) for row in connection.execute(f"SELECT * FROM {name} ORDER BY {order}")]
    finally:
        connection.close()


def stamp(out: Path) -> dict[str, Any]:
    """The stored stamp."""
    return {row["key"]: json.loads(row["value"]) for row in table(out, "stamp")}


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An oracle cache shared by the tests of this process."""
    return tmp_path_factory.mktemp("oracle-cache")


@pytest.fixture
def sweep(tmp_path: Path, shared_cache: Path) -> Sweep:
    """Run `chatparity sweep` on the hand-made corpus into tmp_path/NAME; returns (status, run directory)."""

    def run(name: str, *args: str, cache: Path | None = None) -> tuple[int, Path]:
        out = tmp_path / name
        argv = [
            "--source",
            f"{TESTS / 'sweep_corpus.py'}",
            "--out",
            str(out),
            "--oracle-cache",
            str(cache or shared_cache),
            "--chunking",
            "whole,char,split,random:5",
            *args,
        ]
        return sweep_command.main(argv, prog="chatparity sweep"), out

    return run


def by_template(rows: list[dict[str, Any]], template: str) -> list[dict[str, Any]]:
    """The rows of one template."""
    return [row for row in rows if row["template"] == template]


def test_oracle_against_oracle_matches_everywhere(sweep: Sweep) -> None:
    status, out = sweep("oracle", "--parser", "oracle")
    rows = table(out, "rows")
    assert status == 0
    assert {row["chunking"] for row in rows} == {"whole", "char", "split", "random:5"}
    assert {row["outcome"] for row in rows} == {"match"}
    streamed = [row for row in rows if row["chunking"] != "whole"]
    assert streamed and all(
        (row["consistent"], row["monotonic"], row["clean"], row["snapshot_parity"]) == (1, 1, 1, 1)
        for row in streamed
    )
    assert {row["oracle_vs_truth"] for row in rows if row["truth"]} == {"match"}
    assert {row["status"] for row in table(out, "sessions")} == {"ok"}


def test_dropping_the_last_character_of_content_is_a_content_mismatch(sweep: Sweep) -> None:
    status, out = sweep("drops", "--parser", PARSERS + "DropsLastCharacter")
    rows = table(out, "rows")
    with_content = [row for row in rows if json.loads(row["oracle_reading"])["content"]]
    assert with_content and {(row["outcome"], row["kind"]) for row in with_content} == {
        ("mismatch", "content")
    }
    assert {row["outcome"] for row in rows if row not in with_content} == {"match"}
    sunny = next(
        row
        for row in with_content
        if row["chunking"] == "whole" and row["shape"] == "content" and row["template"] == LLAMA31
    )
    assert sunny["detail"] == "content @11: 'It is sunny.' vs 'It is sunny'"
    assert sunny["parser_vs_truth"] == "content" and sunny["oracle_vs_truth"] == "match"
    assert status == 0


def test_swapping_reasoning_and_content_on_one_template_is_caught_there_only(sweep: Sweep) -> None:
    _, out = sweep("swaps", "--parser", PARSERS + "SwapsOnQwen")
    rows = table(out, "rows")
    assert {row["outcome"] for row in by_template(rows, LLAMA31)} == {"match"}
    thought = [row for row in by_template(rows, QWEN3) if row["shape"] == "thought"]
    assert thought and {(row["outcome"], row["kind"]) for row in thought} == {("mismatch", "content")}
    assert all(
        row["detail"].startswith("content @0: 'It is sunny in Rio.' vs 'Sunny.\\n'") for row in thought
    )


def test_dropping_a_call_is_a_calls_mismatch(sweep: Sweep) -> None:
    _, out = sweep("calls", "--parser", PARSERS + "DropsACall")
    rows = table(out, "rows")
    two = [row for row in rows if row["shape"] == "calls"]
    assert two and {(row["kind"], row["detail"].split(" (cut")[0]) for row in two} == {
        ("calls", """tool_calls: 2 calls vs 1; tool_calls[1] lost: get_weather('{"city": "Paris"}')""")
    }
    assert {row["outcome"] for row in rows if row["shape"] in {"content", "thought"}} == {"match"}


def test_a_retracted_snapshot_fails_monotonic(sweep: Sweep) -> None:
    _, out = sweep("retracts", "--parser", PARSERS + "Retracts")
    char = [
        row
        for row in table(out, "rows")
        if row["chunking"] == "char" and row["template"] == QWEN3 and row["shape"] != "content"
    ]
    assert char and {row["monotonic"] for row in char} == {0}
    assert all(row["stream_detail"].startswith("monotonic: reasoning_content retracted @1:") for row in char)
    assert {row["outcome"] for row in char} == {"match"}


def test_a_raising_parser_is_parser_crashed_and_the_run_goes_on(sweep: Sweep) -> None:
    status, out = sweep("raises", "--parser", PARSERS + "RaisesOnLlama")
    rows = table(out, "rows")
    llama = by_template(rows, LLAMA31)
    assert llama and {row["outcome"] for row in llama} == {"parser_crashed"}
    assert all("RuntimeError: wrapper failure" in row["error"] for row in llama)
    assert {row["outcome"] for row in by_template(rows, QWEN3)} == {"match"}
    assert status == 0 and stamp(out)["lost_items"] == []


def test_each_reply_is_parsed_whole_once_after_its_first_stream(
    sweep: Sweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser reads each case's reply whole once, right after the first stream of it (what it read
    streaming is there for the whole read: the project parser's diagnosis of a refusal reuses it)."""
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("CHATPARITY_CALLS", str(calls))
    status, out = sweep("order", "--parser", PARSERS + "NotesCalls", "-n", "0", "--profile", "full",
                        "--chunking", "whole,char")
    events = [tuple(json.loads(line)) for line in calls.read_text(encoding="utf-8").splitlines()]
    parses = [at for at, (what, _) in enumerate(events) if what == "parse"]
    whole = [row for row in table(out, "rows") if row["chunking"] == "whole"]
    assert status in (0, 1) and whole and len(parses) == len(whole)
    assert all(at > 0 and events[at - 1] == ("fed", events[at][1]) for at in parses)


def test_a_sweep_loads_no_installed_plugin_on_its_own(
    sweep: Sweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plugins installed beside pytest (pytest-xdist's own entry points at least; a plugin that reorders or
    reseeds tests, say) are not loaded into a sweep's session; the ones it names are."""
    from importlib.metadata import entry_points

    noted = tmp_path / "plugins.json"
    monkeypatch.setenv("CHATPARITY_PLUGINS", str(noted))
    assert {point.name for point in entry_points(group="pytest11")} >= {"xdist"}
    status, out = sweep("plugins", "--parser", PARSERS + "Echo", "-n", "0", "--templates", QWEN3,
                        "--pytest-args", "-p tests.sweep_plugin_probe")
    assert status in (0, 1) and (out / "rows.sqlite").exists()
    assert json.loads(noted.read_text(encoding="utf-8")) == []


def test_a_declined_session_gives_unsupported_rows(sweep: Sweep) -> None:
    _, out = sweep("declines", "--parser", PARSERS + "DeclinesLlama")
    assert {row["outcome"] for row in by_template(table(out, "rows"), LLAMA31)} == {"unsupported"}
    statuses = {row["template"]: row["status"] for row in table(out, "sessions")}
    assert statuses == {LLAMA31: "unsupported", QWEN3: "ok"}


def test_a_session_the_parser_cannot_render_keeps_its_rows_and_fails_where_they_matched(
    sweep: Sweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expectations = tmp_path / "expectations"
    expectations.mkdir()
    parser = PARSERS + "RenderFailsOnLlama"
    _, before = sweep("renders", "--parser", parser, "--expectations", str(expectations))
    baseline = expectations / "baseline"
    write_baseline(baseline, update(read_baseline(baseline), load_run(before)))
    monkeypatch.setenv("RENDER_FAILS", "1")
    _, after = sweep("render-fails", "--parser", parser, "--expectations", str(expectations))
    llama = by_template(table(after, "rows"), LLAMA31)
    assert len(llama) == len(by_template(table(before, "rows"), LLAMA31)) > 0
    assert {row["outcome"] for row in llama} == {"unsupported"}
    assert all("string index out of range" in row["error"] for row in llama)
    statuses = {row["template"]: row["status"] for row in table(after, "sessions")}
    assert statuses == {LLAMA31: "render_failed", QWEN3: "ok"}
    run = load_run(after)
    verdict = classify_run(run)
    judged = sweep_judgement(run, verdict)
    assert set(judged.failures["template"]) == {LLAMA31} and exit_status(judged) == 1
    result = check(read_baseline(baseline), run, verdict)
    assert set(result.judgement.declined["template"]) == {LLAMA31} and not result.passed


def test_the_subprocess_example_parser_round_trips(sweep: Sweep) -> None:
    status, out = sweep("cmd", "--parser", EXAMPLE, "--templates", "Qwen*")
    rows = table(out, "rows")
    assert status == 0 and rows and {row["outcome"] for row in rows} == {"match"}
    assert all(row["snapshot_parity"] == 1 for row in rows if row["chunking"] != "whole")
    assert stamp(out)["parser"] == "oracle-over-json-lines" and stamp(out)["parser_revision"]
    assert stamp(out)["parser_spec"] == EXAMPLE


def test_a_parser_is_the_name_its_info_gives_wherever_it_is_built_to_gate_and_diff(
    sweep: Sweep, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkouts = []
    for checkout in ("a", "b"):
        program = tmp_path / checkout / "sweep_example_parser.py"
        program.parent.mkdir()
        shutil.copy(TESTS / "sweep_example_parser.py", program)
        checkouts.append(f"cmd:{sys.executable} {program}")
    runs = [sweep(f"run-{index}", "--parser", spec, "--templates", "Qwen*", "--chunking", "whole")[1]
            for index, spec in enumerate(checkouts)]
    assert [stamp(run)["parser"] for run in runs] == ["oracle-over-json-lines"] * 2
    assert [stamp(run)["parser_spec"] for run in runs] == checkouts
    baseline = str(tmp_path / "baseline")
    assert gate_main(["--baseline", baseline, "--update", str(runs[0])], "chatparity gate") == 0
    assert gate_main(["--baseline", baseline, str(runs[1])], "chatparity gate") == 0
    assert diff_main([str(runs[0]), str(runs[1])], "chatparity diff") == 0
    assert "other parser" not in capsys.readouterr().err
    _, named = sweep("named", "--parser", checkouts[1], "--parser-name", "mine", "--templates", "Qwen*",
                     "--chunking", "whole")
    assert stamp(named)["parser"] == "mine"
    assert gate_main(["--baseline", baseline, str(named)], "chatparity gate") == 2
    assert "the baseline is of parser 'oracle-over-json-lines', the run of 'mine'" in capsys.readouterr().err


def test_named_chunkings_run_on_every_reply_and_the_stamp_counts_what_ran(
    sweep: Sweep, capsys: pytest.CaptureFixture[str]
) -> None:
    named = ("whole", "char3", "split", "special")
    status, out = sweep("named", "--templates", "Qwen*", "--chunking", ",".join(named))
    rows = table(out, "rows")
    replies = {row["case_id"]: row["reply"] for row in rows}
    ran = {name: {row["case_id"] for row in rows if row["chunking"] == name} for name in named}
    assert status == 0 and ran["whole"] == ran["char3"] == set(replies) and ran["special"]
    assert ran["split"] == {case for case, text in replies.items() if len(text) > 1}
    assert any(len(replies[case]) > 20 for case in ran["split"])
    assert stamp(out)["chunking_rows"] == {name: sum(row["chunking"] == name for row in rows) for name in named}
    assert stamp(out)["chunking_rules"] == "every reply" and stamp(out)["profile_limits"] == {}
    capsys.readouterr()
    status, kept = sweep("kept", "--templates", "Qwen*", "--chunking", "whole,char3,split", "--keep-profile-rules")
    rows = table(kept, "rows")
    assert status == 0 and not any(row["chunking"] == "char3" for row in rows)
    assert all(len(row["reply"]) <= 20 for row in rows if row["chunking"] == "split")
    assert stamp(kept)["chunking_rows"]["char3"] == 0 and stamp(kept)["chunking_rules"] == "profile"
    assert "--chunking char3 made no row: the profile's rules" in capsys.readouterr().err


def test_two_identical_sweeps_store_identical_tables(sweep: Sweep) -> None:
    _, first = sweep("first", "--parser", PARSERS + "DropsACall")
    _, second = sweep("second", "--parser", PARSERS + "DropsACall")
    for name in ("stamp", "sessions", "rows"):
        assert table(first, name) == table(second, name)
    assert (first / "rows.sqlite").read_bytes() == (second / "rows.sqlite").read_bytes()


def test_a_rerun_with_the_cache_asks_llama_cpp_nothing(
    sweep: Sweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests: list[str] = []
    real = Oracle.request
    monkeypatch.setattr(
        Oracle, "request", lambda self, payload: requests.append(payload["op"]) or real(self, payload)
    )
    _, first = sweep("fill", "--parser", PARSERS + "Echo", "-n", "0", cache=tmp_path / "cache")
    assert {"render", "parse", "stream"} <= set(requests)
    requests.clear()
    _, again = sweep("again", "--parser", PARSERS + "Echo", "-n", "0", cache=tmp_path / "cache")
    assert requests == []
    assert table(first, "rows") == table(again, "rows")


def test_two_workers_merge_their_rows(sweep: Sweep) -> None:
    _, alone = sweep("alone", "--parser", PARSERS + "DropsLastCharacter")
    status, pair = sweep("pair", "--parser", PARSERS + "DropsLastCharacter", "-n", "2")
    assert status == 0
    assert "workers" not in stamp(pair)
    assert table(pair, "rows") == table(alone, "rows") and table(pair, "sessions") == table(alone, "sessions")


def test_a_report_keeps_no_session_rows_once_every_plugin_has_read_it() -> None:
    report = pytest.TestReport(
        "sweep.py::session", ("sweep.py", 0, "session"), {}, "passed", None, "call",
        user_properties=[(sweep_plugin.PROPERTY, sweep_plugin.payload_bytes({"rows": [{"reply": "x" * 100}]})),
                         ("other", "kept")],
    )
    assert sweep_plugin.payload_of(report) is not None
    sweep_plugin.pytest_runtest_logreport(report)
    assert sweep_plugin.payload_of(report) is None and report.user_properties == [("other", "kept")]


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("plain é 🌧", "plain é 🌧"),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
        ("x" * 0xA0ED, "x" * 0xA0ED),
    ],
)
def test_a_payload_travels_as_written_with_lone_surrogates_escaped(written: str, stored: str) -> None:
    report = pytest.TestReport(
        "sweep.py::session", ("sweep.py", 0, "session"), {}, "passed", None, "call",
        user_properties=[(sweep_plugin.PROPERTY, sweep_plugin.payload_bytes({"rows": [{"reply": written}]}))],
    )
    assert sweep_plugin.payload_of(report) == {"rows": [{"reply": stored}]}


def test_only_failing_reruns_the_failed_rows(sweep: Sweep) -> None:
    _, base = sweep("base", "--parser", PARSERS + "SwapsOnQwen")
    failed = {
        (row["case_id"], row["chunking"])
        for row in table(base, "rows")
        if row["outcome"] != "match"
        or 0 in (row["consistent"], row["monotonic"], row["clean"], row["snapshot_parity"])
    }
    _, rerun = sweep("rerun", "--parser", PARSERS + "SwapsOnQwen", "--only-failing", str(base))
    assert {(row["case_id"], row["chunking"]) for row in table(rerun, "rows")} == failed
    assert 0 < len(failed) < len(table(base, "rows"))
    assert {row["template"] for row in table(rerun, "sessions")} == {QWEN3}


def test_only_failing_reruns_failed_rows_at_chunkings_the_profile_runs_elsewhere(sweep: Sweep) -> None:
    _, base = sweep("base", "--parser", PARSERS + "SwapsOnQwen", "--chunking", "whole,char3")
    failed = {(case, chunking) for case, chunking, _ in sweep_command.failing_rows(base)}
    assert "char3" in {chunking for _, chunking in failed}
    _, rerun = sweep("rerun", "--parser", PARSERS + "SwapsOnQwen", "--only-failing", str(base), "--chunking", "")
    assert {(row["case_id"], row["chunking"]) for row in table(rerun, "rows")} == failed


def test_an_interrupted_sweep_leaves_the_earlier_store_intact(sweep: Sweep) -> None:
    _, out = sweep("kept", "--parser", PARSERS + "DropsACall")
    before = (out / "rows.sqlite").read_bytes()
    status, again = sweep("kept", "--parser", PARSERS + "Interrupts")
    assert status == pytest.ExitCode.INTERRUPTED
    assert (again / "rows.sqlite").read_bytes() == before
    assert [path.name for path in again.iterdir() if path.name.startswith("rows.sqlite")] == ["rows.sqlite"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--chunking", "whole,chars"), "unknown chunking 'chars'"),
        (("--parser", "no_such_module:factory"), "cannot import no_such_module"),
        (("--parser", "oracle:9.9.9"), "9.9.9 is not pinned"),
        (("--parser", "cmd:no-such-program --flag"), "no executable 'no-such-program'"),
        (("--only-failing", "/nonexistent/run"), "no run store"),
        (("--parser-name", " "), "--parser-name: expected a non-empty name"),
        (("--keep-profile-rules", "--chunking", ""), "--keep-profile-rules only goes with --chunking"),
    ],
)
def test_bad_flags_are_named_before_anything_runs(
    sweep: Sweep, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], message: str
) -> None:
    status, out = sweep("bad", *flags)
    assert status == 2 and message in capsys.readouterr().err
    assert not out.exists()


def test_a_hanging_parser_is_parser_timeout(sweep: Sweep) -> None:
    status, out = sweep(
        "hangs", "--parser", PARSERS + "SleepsOnLlama", "--timeout", "0.5", "--chunking", "whole"
    )
    rows = table(out, "rows")
    assert status == 0 and {row["outcome"] for row in by_template(rows, LLAMA31)} == {"parser_timeout"}
    assert {row["outcome"] for row in by_template(rows, QWEN3)} == {"match"}


def test_a_crashed_worker_costs_its_item_not_the_run(sweep: Sweep) -> None:
    status, out = sweep("exits", "--parser", PARSERS + "ExitsOnLlama", "-n", "2", "--chunking", "whole")
    assert status == pytest.ExitCode.TESTS_FAILED
    rows = table(out, "rows")
    assert rows and {row["template"] for row in rows} == {QWEN3}
    assert [item.split("::")[1].split("[")[0] for item in stamp(out)["lost_items"]] == [LLAMA31]


def test_the_preparation_runs_once_before_any_session(
    tmp_path: Path, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real = sweep_plugin.SweepItem.runtest
    monkeypatch.setattr(sweep_plugin.SweepItem, "runtest", lambda item: events.append("session") or real(item))
    argv = ["--source", f"{TESTS / 'sweep_corpus.py'}", "--out", str(tmp_path / "run"), "--oracle-cache",
            str(shared_cache), "--chunking", "whole", "--parser", PARSERS + "Echo", "-n", "0"]
    status = sweep_command.main(argv, prog="chatparity sweep", prepare=lambda: events.append("prepare"))
    assert status == 0
    assert events[0] == "prepare" and events.count("prepare") == 1 and events.count("session") > 1


def test_with_workers_the_preparation_runs_once_in_the_controller(tmp_path: Path, shared_cache: Path) -> None:
    prepared: list[int] = []
    argv = ["--source", f"{TESTS / 'sweep_corpus.py'}", "--out", str(tmp_path / "run"), "--oracle-cache",
            str(shared_cache), "--chunking", "whole", "--parser", PARSERS + "Echo", "-n", "1"]
    status = sweep_command.main(argv, prog="chatparity sweep", prepare=lambda: prepared.append(os.getpid()))
    assert status == 0
    assert prepared == [os.getpid()]
    assert table(tmp_path / "run", "rows")


def test_the_sweep_command_imports_the_report_modules_only_to_prepare_publishing() -> None:
    code = ("import sys, reports.commands.sweep as command; before = 'pandas' in sys.modules; "
            "command.load_reports(); print(before, 'pandas' in sys.modules, 'reports.publish' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=TESTS.parent)
    assert done.stdout.split() == ["False", "True", "True"]


def test_a_known_divergence_labels_the_rows_it_explains_as_the_sweep_makes_them(
    shared_cache: Path, tmp_path: Path
) -> None:
    from reports.commands.sweep import main as sweep_main

    expectations = tmp_path / "expectations"
    expectations.mkdir()
    (expectations / "known_divergences.toml").write_text(
        '[[divergence]]\nname = "drops-last"\ntemplate = "Qwen-*"\nkind = "content"\n'
        'reason = "the example drops the last character"\nundecidable = "no rule predicts a dropped character"\n',
        encoding="utf-8",
    )
    out = tmp_path / "labelled"
    status = sweep_main(["--source", f"{TESTS / 'sweep_corpus.py'}", "--out", str(out), "--oracle-cache",
                         str(shared_cache), "--chunking", "whole,char", "--parser", PARSERS + "DropsLastCharacter",
                         "--expectations", str(expectations)])
    rows = table(out, "rows")
    qwen = [row for row in by_template(rows, QWEN3) if row["outcome"] == "mismatch" and row["chunking"] == "whole"]
    assert qwen and {row["explained"] for row in qwen} == {"drops-last"}
    llama = [row for row in by_template(rows, LLAMA31) if row["outcome"] == "mismatch"]
    assert llama and {row["explained"] for row in llama} == {""}
    assert status == 1, "the Llama rows no entry explains fail"


def test_progress_shows_a_session_failing_against_the_baseline_and_not_once_it_records_it(
    tmp_path: Path, shared_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reports.commands.sweep import main as sweep_main

    expectations = tmp_path / "expectations"
    expectations.mkdir()
    argv = ["--source", f"{TESTS / 'sweep_corpus.py'}", "--oracle-cache", str(shared_cache), "--chunking", "whole",
            "--parser", PARSERS + "DropsLastCharacter", "--expectations", str(expectations), "-n", "0"]
    assert sweep_main([*argv, "--out", str(tmp_path / "first")]) == 1
    assert re.search(r"=+ (\d+ passed, )?[1-9]\d* failing in ", capsys.readouterr().out)
    assert gate_main(["--update", str(tmp_path / "first")], "chatparity gate") == 0
    capsys.readouterr()
    assert sweep_main([*argv, "--out", str(tmp_path / "second")]) == 0
    assert re.search(r"=+ \d+ passed in ", capsys.readouterr().out)
