"""`chatparity gate --baseline DIR [RUN]` and `... --update RUN`: the regression gate and its baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from harness.known_divergences import DivergenceFileError
from harness.policies import PolicyFileError
from reports.baselines import BaselineError, outcomes_file, read_baseline, update, write_baseline
from reports.diff import Change
from reports.divergences import classify_run
from reports.expectations import ParserMismatch, baseline_of, check_same_parser
from reports.gate import GateResult, check, check_pins
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


def report(result: GateResult, baseline_dir: Path, run_dir: Path, shown: int = 20) -> list[str]:
    """The gate's printed verdict: PASS or FAIL first, what accounts for the rows, every change, and on a FAIL
    the failing rows last, each with the command that shows it."""
    judgement, verdict = result.judgement, result.verdict
    changes, fixes = result.of(Change.KIND_CHANGE), result.of(Change.FIX)
    relabelled, new = result.of(Change.RELABEL), result.of(Change.NEW)
    lines = [
        f"gate: {'PASS' if result.passed else 'FAIL'}: {run_dir} "
        + judgement.lines()[0].partition(" ")[2].replace("against ", "against the baseline ", 1),
        *judgement.lines()[1:],
        (
            f"  rows checked {result.checked:,} of the baseline's ({result.not_run:,} not run), {len(new):,} new; "
            f"{len(fixes):,} fixed, {len(changes):,} failing otherwise, {len(relabelled):,} accounted for otherwise"
        ),
    ]
    if not relabelled.empty:
        lines += ["accounted for otherwise (passing both ways; e.g. a match now a policy's):",
                  *row_lines(relabelled.head(shown), run_dir)]
    if not fixes.empty:
        record = f"chatparity gate --baseline {baseline_dir} --update {run_dir}"
        lines += [f"fixed (failed in the baseline; record them: {record}):", *row_lines(fixes.head(shown), run_dir)]
    if not judgement.accepted.empty:
        lines += ["accepted by the baseline without a reason (fix each, or name the rule it follows):",
                  *row_lines(judgement.accepted.head(shown), run_dir)]
    if not verdict.unexpected.empty:
        lines.append("UNEXPECTED MATCHES (a known divergence selects them, but they match; narrow or remove it):")
        lines += [
            f"  {row.template} {row.mode} shape {row.shape} {row.chunking} case {row.case_id}: {row.explained}"
            for row in verdict.unexpected.head(shown).itertuples()
        ]
    if verdict.stale:
        lines.append("STALE KNOWN DIVERGENCES (account for no row of this run; fix or remove them):")
        lines += [f"  {entry.label}: {entry.reason}" for entry in verdict.stale]
    if verdict.stale_policies:
        lines.append("STALE POLICIES (account for no row or snapshot of a complete run; fix or remove them):")
        lines += [f"  {policy.name} ({policy.rule}): {policy.reason}" for policy in verdict.stale_policies]
    if result.checked == 0:
        lines.append("NOTHING CHECKED: the run holds no row of the baseline")
    if judgement.lost:
        lines.append(f"LOST: the sweep lost {len(judgement.lost)} items, whose rows were not checked:")
        lines += [f"  {item}" for item in judgement.lost]
    failures = judgement.failures
    if not failures.empty:
        lines.append(f"FAILING ROWS ({len(failures):,}; regressions first; look at each with its command):")
        lines += failure_lines(failures.head(shown), run_dir)
        if len(failures) > shown:
            lines.append(f"  …and {len(failures) - shown:,} more (failures.csv, report.html)")
    lines.append("gate: PASS" if result.passed else "gate: FAIL")
    return lines


def failure_lines(rows: pd.DataFrame, run_dir: Path) -> list[str]:
    """Failing rows, one line each: how they fail against the baseline, and the command that shows the case."""
    return [
        f"  {row.change}: {row.template} {row.mode} shape {row.shape} {row.chunking}: "
        f"{row.base if isinstance(row.base, str) else '(not in the baseline)'} -> {row.head}"
        + (f"  [{row.detail}]" if row.detail else "")
        + f"  {show_command(row.case_id, run_dir)}"
        for row in rows.itertuples()
    ]


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
        verdict = classify_run(run)
    except (RunError, BaselineError, DivergenceFileError, PolicyFileError, ParserMismatch) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    result = check(baseline, run, verdict, str(args.baseline))
    print("\n".join(report(result, args.baseline, run.directory)))
    return 0 if result.passed else 1
