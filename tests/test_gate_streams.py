"""The gate and diff fail on stream bugs planted in the project parser, and on new rows that mismatch; a clean
run passes both."""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatparity import cli
from reports.diff import Change, classify_change
from reports.divergences import classify_run
from reports.judgement import judge
from reports.runs import load_run
from reports.statuses import STREAM_CHECKS
from reports.summary import summary_markdown, summary_text, totals
from tests.drill_support import GOOD_LINES, OTHER_PARSER, QWEN3, streamed_sweep

pytestmark = pytest.mark.oracle

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio", "days": 3}}\n</tool_call>'
STREAM_LINES = (
    *GOOD_LINES,
    {
        "id": "gate-call",
        "template": QWEN3,
        "thinking": True,
        "tools": "auto",
        "kwargs": {},
        "reply": "<think>\nWeather.\n</think>\n\n" + CALL,
        "partial": False,
    },
    {
        "id": "gate-prose-call",
        "template": QWEN3,
        "thinking": True,
        "tools": "auto",
        "kwargs": {},
        "reply": "Let me check.\n" + CALL,
        "partial": False,
    },
)
PLANTED = ("retracting", "partial_marker_showing", "arguments_rewriting")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A clean run, a run of each planted parser, and a gate baseline written from the clean run."""
    directory = tmp_path_factory.mktemp("gate-streams")
    corpus = directory / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(line) + "\n" for line in STREAM_LINES), encoding="utf-8")
    cache = directory / "cache"
    made = {"clean": directory / "clean"}
    streamed_sweep(made["clean"], corpus, cache)
    for name in (*PLANTED, "short_partial_marker_showing", "content_mangling"):
        made[name] = directory / name
        streamed_sweep(made[name], corpus, cache, f"tests.gate_stream_parsers:{name}")
    made["baseline"] = directory / "baseline"
    assert cli.main(["gate", "--baseline", str(made["baseline"]), "--update", str(made["clean"])]) == 0
    return made


CAPTURED: list[pytest.CaptureFixture[str]] = []


@pytest.fixture(autouse=True)
def captured(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Let the tests read what each command prints."""
    CAPTURED.append(capsys)
    yield
    CAPTURED.pop()


def chatparity(*args: str) -> tuple[int, str]:
    """Run `chatparity ARGS`: its exit status and what it printed."""
    status = cli.main(list(args))
    out = CAPTURED[-1].readouterr()
    return status, out.out + out.err


def test_the_clean_run_passes_the_gate_and_diffs_clean(runs: dict[str, Path]) -> None:
    status, printed = chatparity(
        "gate", "--baseline", str(runs["baseline"]), str(runs["clean"]), *OTHER_PARSER
    )
    assert status == 0 and "gate: PASS" in printed.splitlines(), printed
    status, printed = chatparity("diff", str(runs["clean"]), str(runs["clean"]))
    assert status == 0, printed


@pytest.mark.parametrize("planted", PLANTED)
def test_a_planted_stream_bug_fails_the_gate(runs: dict[str, Path], planted: str) -> None:
    status, printed = chatparity(
        "gate", "--baseline", str(runs["baseline"]), str(runs[planted]), *OTHER_PARSER
    )
    assert status == 1 and "gate: FAIL" in printed.splitlines(), printed
    assert "regression: " in printed.split("FAILING ROWS")[1]


@pytest.mark.parametrize("planted", PLANTED)
def test_a_planted_stream_bug_fails_the_diff(runs: dict[str, Path], planted: str) -> None:
    status, printed = chatparity("diff", str(runs["clean"]), str(runs[planted]), "--allow-other-parser")
    assert status == 1, printed


def test_each_planted_bug_breaks_its_own_check(runs: dict[str, Path]) -> None:
    _, printed = chatparity(
        "gate", "--baseline", str(runs["baseline"]), str(runs["retracting"]), *OTHER_PARSER
    )
    assert "monotonic" in printed
    _, printed = chatparity(
        "gate", "--baseline", str(runs["baseline"]), str(runs["partial_marker_showing"]), *OTHER_PARSER
    )
    assert "clean" in printed and "'<t" in printed
    _, printed = chatparity(
        "gate", "--baseline", str(runs["baseline"]), str(runs["arguments_rewriting"]), *OTHER_PARSER
    )
    assert "monotonic" in printed and "tool_calls[0].arguments" in printed


def test_new_rows_that_mismatch_fail_and_new_matching_rows_pass(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    (baseline / "stamp.json").write_bytes((runs["baseline"] / "stamp.json").read_bytes())
    written = (runs["baseline"] / "outcomes.csv.gz").read_bytes()
    header, *lines = gzip.decompress(written).decode("utf-8").splitlines(keepends=True)
    kept = []
    for line in lines:
        fields = next(csv.reader([line]))
        fields[4] = " ".join(chunking for chunking in fields[4].split() if chunking != "whole")
        if fields[4]:
            kept.append(",".join(f'"{field}"' if "," in field else field for field in fields) + "\n")
    assert 0 < len(kept) and any("whole" in line for line in lines)
    (baseline / "outcomes.csv").write_text(header + "".join(kept), encoding="utf-8")
    status, printed = chatparity("gate", "--baseline", str(baseline), str(runs["clean"]), *OTHER_PARSER)
    assert status == 0, printed
    status, printed = chatparity(
        "gate", "--baseline", str(baseline), str(runs["content_mangling"]), *OTHER_PARSER
    )
    assert status == 1 and "new: " in printed.split("FAILING ROWS")[1], printed


def test_the_full_baseline_fails_the_content_bug_as_regressions(runs: dict[str, Path]) -> None:
    status, printed = chatparity(
        "gate", "--baseline", str(runs["baseline"]), str(runs["content_mangling"]), *OTHER_PARSER
    )
    assert status == 1 and "regression: " in printed.split("FAILING ROWS")[1], printed


@pytest.mark.parametrize(
    ("base", "head", "change"),
    [
        ("match", "match !monotonic,snapshot_parity", Change.REGRESSION),
        ("match !snapshot_parity", "match !clean,snapshot_parity", Change.REGRESSION),
        ("mismatch:calls !snapshot_parity", "mismatch:calls !consistent,snapshot_parity", Change.REGRESSION),
        ("mismatch:calls !snapshot_parity", "mismatch:content", Change.KIND_CHANGE),
        ("mismatch:calls !clean,snapshot_parity", "mismatch:calls !snapshot_parity", Change.FIX),
        ("mismatch:calls !snapshot_parity", "match", Change.FIX),
        ("match", "mismatch:content", Change.REGRESSION),
        ("match !clean=2,snapshot_parity=5", "match !clean=2,snapshot_parity=6", Change.REGRESSION),
        ("match !clean=2,snapshot_parity=5", "match !clean=3,snapshot_parity=1", Change.REGRESSION),
        ("match !clean=2,snapshot_parity=5", "match !clean=1,snapshot_parity=5", Change.FIX),
        ("mismatch:calls !snapshot_parity=5", "mismatch:content !snapshot_parity=4", Change.KIND_CHANGE),
        ("match !snapshot_parity", "match !snapshot_parity=9", Change.SAME),
        ("match !clean,snapshot_parity=5", "match !snapshot_parity=5", Change.FIX),
        (None, "match !monotonic,snapshot_parity", Change.NEW),
        ("match", "policy:holds-marker-starts", Change.RELABEL),
        ("llama.cpp:stale_view", "match", Change.RELABEL),
        ("policy:holds-marker-starts", "mismatch:content @0123456789", Change.REGRESSION),
        ("policy:holds-marker-starts", "policy:holds-marker-starts !snapshot_parity=1", Change.REGRESSION),
        ("mismatch:calls @0123456789", "policy:closes-broken-arguments", Change.FIX),
        ("mismatch:calls @0123456789", "mismatch:calls @9876543210", Change.REGRESSION),
    ],
)
def test_stream_checks_count_in_a_change(base: str | None, head: str, change: Change) -> None:
    assert classify_change(base, head) is change


def test_a_stream_check_broken_in_more_snapshots_than_the_baseline_says_fails_the_gate(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    fewer = tmp_path / "fewer"
    fewer_run = str(runs["short_partial_marker_showing"])
    assert cli.main(["gate", "--baseline", str(fewer), "--update", fewer_run]) == 0
    labels = gzip.decompress((fewer / "outcomes.csv.gz").read_bytes()).decode("utf-8")
    assert "clean=" in labels and "snapshot_parity=" in labels
    status, printed = chatparity(
        "gate", "--baseline", str(fewer), str(runs["partial_marker_showing"]), *OTHER_PARSER
    )
    assert status == 1 and "regression: " in printed.split("FAILING ROWS")[1], printed
    status, printed = chatparity(
        "diff", fewer_run, str(runs["partial_marker_showing"]), "--allow-other-parser"
    )
    assert status == 1 and "regression" in printed, printed


def test_a_stream_check_broken_in_fewer_snapshots_passes_the_gate_as_a_fix(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    more = tmp_path / "more"
    assert cli.main(["gate", "--baseline", str(more), "--update", str(runs["partial_marker_showing"])]) == 0
    status, printed = chatparity(
        "gate", "--baseline", str(more), str(runs["short_partial_marker_showing"]), *OTHER_PARSER
    )
    assert status == 0 and "gate: PASS" in printed.splitlines(), printed


def judged(run_dir: Path):
    """A run, its classified rows and its judgement without a baseline."""
    run = load_run(run_dir)
    verdict = classify_run(run)
    return run, verdict, judge(run, verdict, None)


def headline_table(run: Path) -> str:
    """The lines of a run's summary.md that count its rows and streams."""
    markdown = summary_markdown(*judged(run))
    return "\n".join(line for line in markdown.splitlines() if line.startswith(("- rows", "- streams")))


@pytest.mark.parametrize("planted", PLANTED)
def test_a_planted_stream_bug_changes_the_summary_headline(runs: dict[str, Path], planted: str) -> None:
    clean, planted_headline = headline_table(runs["clean"]), headline_table(runs[planted])
    assert "pass every check" in clean and clean != planted_headline
    streamed = totals(judged(runs[planted])[1])
    clean_totals = totals(judged(runs["clean"])[1])
    assert all(streamed.stream_faults[check] >= clean_totals.stream_faults[check] for check in STREAM_CHECKS)
    assert streamed.stream_faults != clean_totals.stream_faults
    passing = streamed.streamed - streamed.streams_failing
    assert f"{passing:,} pass every check, {streamed.streams_failing:,} fail one" in summary_text(*judged(runs[planted]))


def test_retracted_text_is_counted_as_monotonic_failures(runs: dict[str, Path]) -> None:
    assert totals(judged(runs["retracting"])[1]).stream_faults["monotonic"] > 0
