"""The gate fails on regressions and strictness failures, passes improvements, updates only what ran."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from reports_store_builder import MESSAGE, MISMATCH_READ, StoreBuilder

from reports.baselines import read_baseline
from reports.commands.gate import main as gate_main

PROG = "chatparity gate"
READ = MISMATCH_READ


def run_with(directory: Path, outcomes: dict[tuple[str, str], tuple[str, str]], **stamp: str) -> Path:
    """A run of a.jinja whose rows ((case, chunking) -> (outcome, kind)) are given."""
    builder = StoreBuilder(directory)
    builder.stamp.update(stamp)
    for (case, chunking), (outcome, kind) in outcomes.items():
        builder.row(case, "a.jinja", chunking, outcome, kind)
    return builder.write()


BASE = {
    ("c1", "whole"): ("match", ""),
    ("c1", "char"): ("match", ""),
    ("c2", "whole"): ("mismatch", "calls"),
    ("c3", "whole"): ("mismatch", "content"),
}


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    """A baseline written by --update from the BASE run."""
    directory = tmp_path / "baseline"
    assert (
        gate_main(["--baseline", str(directory), "--update", str(run_with(tmp_path / "base", BASE))], PROG)
        == 0
    )
    return directory


def test_update_writes_a_sorted_compact_baseline(baseline: Path) -> None:
    assert (baseline / "outcomes.csv").read_text() == (
        "template,mode,origin,shape,chunkings,outcome,case_id\n"
        "a.jinja,nothink/none,roundtrip,plain,whole char,match,c1\n"
        f"a.jinja,nothink/none,roundtrip,plain,whole,mismatch:calls{READ},c2\n"
        f"a.jinja,nothink/none,roundtrip,plain,whole,mismatch:content{READ},c3\n"
    )
    assert read_baseline(baseline).stamp["llama_cpp_commit"] == "abc123"


def test_a_regression_fails_and_is_printed(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = run_with(tmp_path / "head", {**BASE, ("c1", "char"): ("mismatch", "content")})
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 1
    out = capsys.readouterr().out
    assert "FAILING ROWS (1" in out and "regression: a.jinja nothink/none shape plain char: match -> mismatch:content" in out
    assert out.rstrip().endswith("gate: FAIL") and "chatparity show c1" in out.split("FAILING ROWS")[1]


def test_an_improvement_passes_and_says_how_to_update(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = run_with(tmp_path / "head", {**BASE, ("c2", "whole"): ("match", "")})
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 0
    out = capsys.readouterr().out
    assert "1 fixed" in out and f"--update {head}" in out and "gate: PASS" in out


def test_a_failure_of_another_kind_fails(tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]) -> None:
    head = run_with(tmp_path / "head", {**BASE, ("c3", "whole"): ("mismatch", "reasoning")})
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 1
    assert f"kind change: a.jinja nothink/none shape plain whole: mismatch:content{READ} -> mismatch:reasoning{READ}" in (
        capsys.readouterr().out
    )


def test_a_row_accounted_for_otherwise_while_passing_both_ways_is_listed_not_failed(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = StoreBuilder(tmp_path / "head")
    for (case, chunking), (outcome, kind) in BASE.items():
        if (case, chunking) == ("c1", "char"):
            builder.row(case, "a.jinja", chunking, "mismatch", "content", explained="holds-marker-starts")
        else:
            builder.row(case, "a.jinja", chunking, outcome, kind)
    assert gate_main(["--baseline", str(baseline), str(builder.write())], PROG) == 0
    out = capsys.readouterr().out
    assert "1 accounted for otherwise" in out and "match -> policy:holds-marker-starts" in out


def test_update_rewrites_only_the_rows_that_ran(tmp_path: Path, baseline: Path) -> None:
    partial_run = run_with(
        tmp_path / "head", {("c1", "char"): ("mismatch", "calls"), ("c9", "whole"): ("match", "")}
    )
    assert gate_main(["--baseline", str(baseline), "--update", str(partial_run)], PROG) == 0
    outcomes = read_baseline(baseline).outcomes.set_index(["case_id", "chunking"])["outcome"].to_dict()
    assert outcomes == {
        ("c1", "char"): f"mismatch:calls{READ}",
        ("c1", "whole"): "match",
        ("c2", "whole"): f"mismatch:calls{READ}",
        ("c3", "whole"): f"mismatch:content{READ}",
        ("c9", "whole"): "match",
    }


def test_update_with_prune_drops_the_rows_a_corpus_change_retired(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    retired = {key: value for key, value in BASE.items() if key[0] != "c3"}
    head = run_with(tmp_path / "head", {**retired, ("c9", "whole"): ("match", "")})
    assert gate_main(["--baseline", str(baseline), "--update", "--prune", str(head)], PROG) == 0
    assert "1 dropped" in capsys.readouterr().out
    outcomes = read_baseline(baseline).outcomes.set_index(["case_id", "chunking"])["outcome"].to_dict()
    assert set(outcomes) == {("c1", "whole"), ("c1", "char"), ("c2", "whole"), ("c9", "whole")}
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 0
    assert "(0 not run)" in capsys.readouterr().out
    assert gate_main(["--baseline", str(baseline), "--prune", str(head)], PROG) == 2


def test_unexpected_matches_and_stale_entries_fail_the_gate(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expectations = tmp_path / "expectations"
    expectations.mkdir()
    (expectations / "known_divergences.toml").write_text(
        '[[divergence]]\nname = "lost"\ntemplate = "a.jinja"\nkind = "calls"\nreason = "r"\nundecidable = "u"\n'
    )
    builder = StoreBuilder(tmp_path / "head")
    builder.stamp["expectations"] = str(expectations)
    for (case, chunking), (outcome, kind) in BASE.items():
        explained = "unexpected match of lost" if case == "c1" else "lost" if case == "c2" else ""
        builder.row(case, "a.jinja", chunking, outcome, kind, explained=explained)
    assert gate_main(["--baseline", str(baseline), "--allow-other-parser", str(builder.write())], PROG) == 1
    assert "UNEXPECTED MATCHES" in capsys.readouterr().out
    stale = StoreBuilder(tmp_path / "stale")
    stale.stamp["expectations"] = str(expectations)
    stale.row("c2", "a.jinja", "whole", "mismatch", "calls")
    assert gate_main(["--baseline", str(baseline), str(stale.write())], PROG) == 1
    assert "STALE KNOWN DIVERGENCES" in capsys.readouterr().out


def test_a_run_with_other_pins_is_refused(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = run_with(tmp_path / "head", BASE, template_index_hash="idx2")
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 2
    assert "template_index_hash" in capsys.readouterr().err
    assert gate_main(["--baseline", str(baseline), "--allow-pin-mismatch", str(head)], PROG) == 0


def test_a_malformed_baseline_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "bad"
    directory.mkdir()
    (directory / "outcomes.csv").write_text("case,outcome\nc1,match\n")
    assert gate_main(["--baseline", str(directory), str(run_with(tmp_path / "head", BASE))], PROG) == 2
    assert "expected columns template,mode,origin,shape,chunkings,outcome,case_id" in capsys.readouterr().err
    (directory / "outcomes.csv").write_text(
        "template,mode,origin,shape,chunkings,outcome,case_id\n"
        "a.jinja,nothink/none,roundtrip,plain,whole,match,c1\na.jinja,nothink/none,roundtrip,plain,whole,mismatch:calls,c1\n"
    )
    assert gate_main(["--baseline", str(directory), str(run_with(tmp_path / "head", BASE))], PROG) == 2
    assert "row c1 whole is listed twice" in capsys.readouterr().err


def test_the_baseline_records_stream_departures_and_reads_them_back(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    builder.row("c1", "a.jinja", "char", "match", clean=0, snapshot_parity=0)
    builder.row("c1", "a.jinja", "split", "match", monotonic=0)
    directory = tmp_path / "baseline"
    assert gate_main(["--baseline", str(directory), "--update", str(builder.write())], PROG) == 0
    lines = (directory / "outcomes.csv").read_text().splitlines()
    assert lines[1:] == [
        "a.jinja,nothink/none,roundtrip,plain,split,match,c1",
        "a.jinja,nothink/none,roundtrip,plain,char,\"match !clean,snapshot_parity\",c1",
    ]
    outcomes = read_baseline(directory).outcomes
    assert sorted(zip(outcomes["chunking"], outcomes["outcome"])) == [
        ("char", "match !clean,snapshot_parity"),
        ("split", "match"),
    ]


def test_a_mismatch_that_reads_otherwise_fails_and_a_damaged_digest_is_named(
    tmp_path: Path, baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = StoreBuilder(tmp_path / "head")
    for (case, chunking), (outcome, kind) in BASE.items():
        other = json.dumps(dict(MESSAGE, content="Help")) if case == "c3" else None
        builder.row(case, "a.jinja", chunking, outcome, kind, **({"parser_reading": other} if other else {}))
    head = builder.write()
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 1
    out = capsys.readouterr().out
    assert "1 regressions" in out and f"whole: mismatch:content{READ} -> mismatch:content @" in out
    damaged = (baseline / "outcomes.csv").read_text().replace(READ, " @nothex")
    (baseline / "outcomes.csv").write_text(damaged)
    assert gate_main(["--baseline", str(baseline), str(head)], PROG) == 2
    assert "field 'outcome': 'mismatch:calls @nothex' is not an outcome" in capsys.readouterr().err


def test_a_full_profile_baseline_is_written_compressed_byte_stable_and_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = (run_with(tmp_path / name, BASE, profile="full") for name in ("base", "head"))
    directory = tmp_path / "baseline-full"
    assert gate_main(["--baseline", str(directory), "--update", str(base)], PROG) == 0
    written = (directory / "outcomes.csv.gz").read_bytes()
    assert not (directory / "outcomes.csv").exists()
    assert gzip.decompress(written).decode().splitlines()[1] == "a.jinja,nothink/none,roundtrip,plain,whole char,match,c1"
    assert gate_main(["--baseline", str(directory), "--update", str(base)], PROG) == 0
    assert (directory / "outcomes.csv.gz").read_bytes() == written
    assert len(read_baseline(directory).outcomes) == len(BASE)
    assert gate_main(["--baseline", str(directory), str(head)], PROG) == 0
    regressed = run_with(tmp_path / "regressed", {**BASE, ("c1", "char"): ("mismatch", "content")}, profile="full")
    assert gate_main(["--baseline", str(directory), str(regressed)], PROG) == 1
    capsys.readouterr()
    (directory / "outcomes.csv.gz").write_bytes(written[: len(written) // 2])
    assert gate_main(["--baseline", str(directory), str(head)], PROG) == 2
    assert "outcomes.csv.gz: not a whole gzip file" in capsys.readouterr().err
    (directory / "outcomes.csv.gz").write_bytes(gzip.compress(gzip.decompress(written)[:-1]))
    assert gate_main(["--baseline", str(directory), str(head)], PROG) == 2
    assert "outcomes.csv.gz: truncated" in capsys.readouterr().err
    (directory / "outcomes.csv.gz").write_bytes(written)
    (directory / "outcomes.csv").write_text("template,mode,origin,shape,chunkings,outcome,case_id\n")
    assert gate_main(["--baseline", str(directory), str(head)], PROG) == 2
    assert "holds both outcomes.csv and outcomes.csv.gz" in capsys.readouterr().err


def test_a_run_takes_the_baseline_of_its_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expectations = tmp_path / "expectations"
    quick = run_with(tmp_path / "quick", BASE, expectations=str(expectations))
    full = run_with(tmp_path / "full", BASE, expectations=str(expectations), profile="full")
    assert gate_main(["--update", str(quick)], PROG) == 0 and gate_main(["--update", str(full)], PROG) == 0
    assert (expectations / "baseline" / "outcomes.csv").is_file()
    assert (expectations / "baseline-full" / "outcomes.csv.gz").is_file()
    assert read_baseline(expectations / "baseline-full").stamp["profile"] == "full"
    assert read_baseline(expectations / "baseline").stamp["profile"] != "full"
    assert gate_main([str(full)], PROG) == 0 and gate_main([str(quick)], PROG) == 0
