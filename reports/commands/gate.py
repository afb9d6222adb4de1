"""`chatparity gate --baseline DIR [RUN]` and `... --update RUN`: the regression gate and its baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from reports.diff import Change
from reports.divergences import DEFAULT_PATH, DivergenceFileError, classify_run
from reports.gate import (
    DEFAULT_BASELINE,
    BaselineError,
    GateResult,
    check,
    check_pins,
    read_baseline,
    update,
    write_baseline,
)
from reports.runs import RunError, load_run


def latest_run(root: Path) -> Path:
    """The most recently written run directory under `root` (reports/runs by default)."""
    stores = sorted(root.glob("*/rows.sqlite"), key=lambda file: (file.stat().st_mtime, str(file)))
    if not stores:
        raise RunError(f"{root}: no runs here; name the run directory")
    return stores[-1].parent


def row_lines(rows: pd.DataFrame) -> list[str]:
    """Changed rows, one line each."""
    return [
        f"  {row.template} {row.mode} shape {row.shape} {row.chunking} case {row.case_id}: "
        f"{row.base if isinstance(row.base, str) else '(new)'} -> {row.head}"
        + (f"  [{row.detail}]" if row.detail else "")
        for row in rows.itertuples()
    ]


def report(result: GateResult, baseline_dir: Path, run_dir: Path) -> list[str]:
    """The gate's printed verdict."""
    regressions, changes = result.of(Change.REGRESSION), result.of(Change.KIND_CHANGE)
    fixes, new = result.of(Change.FIX), result.of(Change.NEW)
    verdict = result.verdict
    lines = [
        (
            f"gate: {run_dir} against {baseline_dir}: {len(result.rows)} rows checked; {len(regressions)} "
            f"regressions, {len(changes)} kind changes, {len(fixes)} improvements, {len(new)} new rows "
            f"({int((new['head'] != 'match').sum())} not matching); {result.not_run} baseline rows not run"
        )
    ]
    if not regressions.empty:
        lines += ["REGRESSIONS (matched in the baseline, no longer match):", *row_lines(regressions)]
    if not changes.empty:
        lines += ["kind changes (failed one way, now fail another):", *row_lines(changes)]
    if not verdict.unexpected.empty:
        lines.append(
            "UNEXPECTED MATCHES (listed as known divergences, now match; remove or narrow the entry):"
        )
        lines += [
            f"  {row.template} {row.mode} shape {row.shape} {row.chunking} case {row.case_id}: "
            f"{row.divergence}"
            for row in verdict.unexpected.itertuples()
        ]
    if verdict.stale:
        lines.append("STALE KNOWN DIVERGENCES (cover no row of this run; fix or remove them):")
        lines += [f"  {entry.label}: {entry.reason}" for entry in verdict.stale]
    if not fixes.empty or not changes.empty or not new.empty:
        lines.append(
            f"to record these outcomes: chatparity gate --baseline {baseline_dir} --update {run_dir}"
        )
    lines.append("gate: PASS" if result.passed else "gate: FAIL")
    return lines


def main(argv: list[str], prog: str) -> int:
    """Check a run against the baseline (exit 1 on a regression or strictness failure), or update it."""
    parser = argparse.ArgumentParser(prog=prog, description="Fail on rows that regressed against a baseline.")
    parser.add_argument(
        "run", nargs="?", type=Path, help="the run directory (default: the newest under reports/runs)"
    )
    parser.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE, help="the baseline directory")
    parser.add_argument("--update", action="store_true", help="rewrite the baseline rows that ran in RUN")
    parser.add_argument("--divergences", type=Path, default=DEFAULT_PATH, help="the known-divergences file")
    parser.add_argument(
        "--allow-pin-mismatch",
        action="store_true",
        help="use a run whose llama.cpp commit, template index or profile differ from the baseline's",
    )
    args = parser.parse_args(argv)
    try:
        run = load_run(args.run or latest_run(Path("reports/runs")))
        baseline = read_baseline(args.baseline)
        for difference in check_pins(baseline, run, args.allow_pin_mismatch):
            print(f"{prog}: WARNING: pins differ from the baseline's: {difference}", file=sys.stderr)
        if args.update:
            updated = update(baseline, run)
            write_baseline(args.baseline, updated)
            print(
                f"{prog}: {args.baseline}: {len(run.rows)} rows rewritten from {run.directory}, "
                f"{len(updated.outcomes) - len(run.rows)} kept"
            )
            return 0
        verdict = classify_run(run, args.divergences)
    except (RunError, BaselineError, DivergenceFileError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    result = check(baseline, run, verdict)
    for item in run.lost:
        print(f"{prog}: WARNING: the sweep lost {item}; its rows were not checked", file=sys.stderr)
    print("\n".join(report(result, args.baseline, run.directory)))
    return 0 if result.passed else 1
