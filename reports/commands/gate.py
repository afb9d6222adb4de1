"""`chatparity gate --baseline DIR [RUN]` and `... --update RUN`: the regression gate and its baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from reports.diff import Change
from reports.divergences import DivergenceFileError, classify_run
from reports.expectations import ParserMismatch, baseline_of, check_same_parser
from reports.gate import (
    BaselineError,
    GateResult,
    check,
    check_pins,
    outcomes_file,
    read_baseline,
    update,
    write_baseline,
)
from reports.runs import RunError, load_run
from reports.show import show_command


def latest_run(root: Path) -> Path:
    """The most recently written run directory under `root` (reports/runs by default)."""
    stores = sorted(root.glob("*/rows.sqlite"), key=lambda file: (file.stat().st_mtime, str(file)))
    if not stores:
        raise RunError(f"{root}: no runs here; name the run directory")
    return stores[-1].parent


def row_lines(rows: pd.DataFrame, run_dir: Path) -> list[str]:
    """Changed rows, one line each, with the command that shows the case."""
    return [
        f"  {row.template} {row.mode} shape {row.shape} {row.chunking} case {row.case_id}: "
        f"{row.base if isinstance(row.base, str) else '(new)'} -> {row.head}"
        + (f"  [{row.detail}]" if row.detail else "")
        + f"  ({show_command(row.case_id, run_dir)})"
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
        lines += [
            ("REGRESSIONS (matched in the baseline and no longer match, break a stream check they did not, or "
             "match only by giving up a known divergence):"),
            *row_lines(regressions, run_dir),
        ]
    if not result.new_failures.empty:
        lines += [
            "NEW ROWS THAT FAIL (not in the baseline: a new mismatch, parser error or broken stream check):",
            *row_lines(result.new_failures, run_dir),
        ]
    if not changes.empty:
        lines += ["kind changes (failed one way, now fail another):", *row_lines(changes, run_dir)]
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
    if result.checked == 0:
        lines.append("NOTHING CHECKED: the run holds no row of the baseline")
    if result.lost:
        lines.append(f"LOST: the sweep lost {len(result.lost)} items, whose rows were not checked:")
        lines += [f"  {item}" for item in result.lost]
    lines.append("gate: PASS" if result.passed else "gate: FAIL")
    return lines


def main(argv: list[str], prog: str) -> int:
    """Check a run against the baseline (exit 1 on a regression or strictness failure), or update it."""
    parser = argparse.ArgumentParser(prog=prog, description="Fail on rows that regressed against a baseline.")
    parser.add_argument(
        "run", nargs="?", type=Path, help="the run directory (default: the newest under reports/runs)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="the baseline directory (default: the baseline/ of the run's parser's expectations, as its stamp "
        "names them)",
    )
    parser.add_argument("--update", action="store_true", help="rewrite the baseline rows that ran in RUN")
    parser.add_argument(
        "--prune",
        action="store_true",
        help="with --update, drop the baseline rows RUN did not run (cases a corpus change retired)",
    )
    parser.add_argument(
        "--divergences",
        type=Path,
        help="the known-divergences file (default: those of the run's parser, as its stamp names them)",
    )
    parser.add_argument(
        "--allow-pin-mismatch",
        action="store_true",
        help="use a run whose llama.cpp commit, template index or profile differ from the baseline's",
    )
    parser.add_argument(
        "--allow-other-parser", action="store_true", help="use a baseline recorded for another parser"
    )
    args = parser.parse_args(argv)
    try:
        run = load_run(args.run or latest_run(Path("reports/runs")))
        args.baseline = args.baseline or baseline_of(run.stamp)
        if args.baseline is None:
            raise BaselineError(
                f"the run's parser {run.stamp.get('parser')!r} has no expectations directory "
                "(sweep it with --expectations DIR, or name a --baseline)"
            )
        if args.prune and not args.update:
            raise BaselineError("--prune only goes with --update")
        if not args.update and outcomes_file(args.baseline) is None:
            raise BaselineError(
                f"{args.baseline}: no baseline here (create one with --update RUN)"
            )
        baseline = read_baseline(args.baseline)
        for warning in check_same_parser(baseline.stamp, run.stamp, "the baseline", args.allow_other_parser):
            print(f"{prog}: {warning}", file=sys.stderr)
        for difference in check_pins(baseline, run, args.allow_pin_mismatch):
            print(f"{prog}: WARNING: pins differ from the baseline's: {difference}", file=sys.stderr)
        if args.update:
            updated = update(baseline, run)
            stale = len(updated.outcomes) - len(run.rows)
            if args.prune:
                updated = update(baseline, run, prune=True)
            write_baseline(args.baseline, updated)
            print(
                f"{prog}: {args.baseline}: {len(run.rows)} rows rewritten from {run.directory}, "
                f"{stale} {'dropped' if args.prune else 'kept'}"
            )
            return 0
        verdict = classify_run(run, args.divergences)
    except (RunError, BaselineError, DivergenceFileError, ParserMismatch) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    result = check(baseline, run, verdict)
    print("\n".join(report(result, args.baseline, run.directory)))
    return 0 if result.passed else 1
