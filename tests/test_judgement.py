"""The verdict every report opens with: a run judged against its parser's baseline by the rows' labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reports.divergences import classify_run
from reports.judgement import judge
from reports.runs import load_run
from tests.reports_store_builder import MISMATCH_READ, StoreBuilder

COLUMNS = ["case_id", "chunking", "outcome"]


def run_of(tmp_path: Path):
    """A run of five rows: a match, a policy's difference, a llama.cpp defect, a bug and a stream that breaks."""
    built = (
        StoreBuilder(tmp_path)
        .row("c1", "t.jinja")
        .row("c2", "t.jinja", outcome="mismatch", kind="content", explained="holds-marker-starts")
        .row("c3", "t.jinja", outcome="mismatch", kind="calls", explained="llama.cpp:empty_read")
        .row("c4", "t.jinja", outcome="mismatch", kind="content")
        .row("c5", "t.jinja", chunking="char", snapshot_parity=0, parity_breaks=3,
             parity_explained="holds-arguments-to-closable-point=7,llama.cpp:stale_view=2")
        .write()
    )
    run = load_run(built)
    return run, classify_run(run)


def baseline(*lines: tuple[str, str, str]) -> pd.DataFrame:
    """A baseline's labels."""
    return pd.DataFrame(list(lines), columns=COLUMNS)


def test_without_a_baseline_every_failing_row_is_new_and_the_run_fails(tmp_path: Path) -> None:
    run, verdict = run_of(tmp_path)
    judged = judge(run, verdict, None)
    assert sorted(judged.new_failures["case_id"]) == ["c4", "c5"]
    assert not judged.passed
    assert judged.lines()[0].startswith("FAIL (no baseline): 0 regressions, 2 new failing rows")


def test_failing_rows_the_baseline_records_alike_pass_but_are_listed_as_accepted(tmp_path: Path) -> None:
    run, verdict = run_of(tmp_path)
    judged = judge(run, verdict, baseline(("c4", "whole", "mismatch:content" + MISMATCH_READ),
                                          ("c5", "char", "match !snapshot_parity=3")))
    assert judged.passed and judged.failures.empty
    assert sorted(judged.accepted["case_id"]) == ["c4", "c5"]
    assert "accepted by the baseline without a reason: 2 rows" in judged.lines()[2]


def test_llama_cpps_own_errors_the_baseline_records_are_not_accepted_as_the_parsers(tmp_path: Path) -> None:
    built = (
        StoreBuilder(tmp_path)
        .row("c1", "t.jinja", outcome="oracle_crashed", error="tokenize: the tokens spell 3 of the text's 4 bytes")
        .row("c2", "t.jinja", outcome="mismatch", kind="content")
        .write()
    )
    run = load_run(built)
    judged = judge(run, classify_run(run), baseline(("c1", "whole", "oracle_crashed"),
                                                    ("c2", "whole", "mismatch:content" + MISMATCH_READ)))
    assert judged.passed and list(judged.accepted["case_id"]) == ["c2"]
    assert "accepted by the baseline without a reason: 1 rows" in judged.lines()[2]
    assert judged.lines()[3].endswith("llama.cpp errors: 1 rows")


def test_a_row_that_passed_in_the_baseline_and_fails_now_is_a_regression(tmp_path: Path) -> None:
    run, verdict = run_of(tmp_path)
    judged = judge(run, verdict, baseline(("c4", "whole", "match"), ("c5", "char", "match !snapshot_parity=2")))
    assert sorted(judged.regressions["case_id"]) == ["c4", "c5"]
    assert not judged.passed


def test_a_row_that_failed_in_the_baseline_and_passes_now_is_fixed(tmp_path: Path) -> None:
    run, verdict = run_of(tmp_path)
    judged = judge(run, verdict, baseline(("c1", "whole", "mismatch:content @0123456789"),
                                          ("c4", "whole", "mismatch:content" + MISMATCH_READ),
                                          ("c5", "char", "match !snapshot_parity=3")))
    assert judged.fixed == 1 and judged.passed


def test_policies_and_llama_cpp_defects_are_counted_by_name_rows_and_snapshots(tmp_path: Path) -> None:
    run, verdict = run_of(tmp_path)
    judged = judge(run, verdict, None)
    assert judged.policy_rows == {"holds-marker-starts": 1}
    assert judged.policy_snapshots == {"holds-arguments-to-closable-point": 7}
    assert judged.defect_rows == {"llama.cpp:empty_read": 1}
    assert judged.defect_snapshots == {"llama.cpp:stale_view": 2}
    assert (judged.policy_total, judged.defect_total) == (1, 1)
