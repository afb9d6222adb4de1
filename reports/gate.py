"""The regression gate: a committed baseline of outcome labels per row, and the check of a run against it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reports.diff import Change, classify_change
from reports.divergences import Verdict
from reports.runs import PIN_KEYS, Run, pin_differences
from reports.statuses import outcome_label

DEFAULT_BASELINE = Path(__file__).with_name("baseline")
OUTCOMES = "outcomes.csv"
STAMP = "stamp.json"
COLUMNS = ["case_id", "chunking", "outcome"]
FILE_COLUMNS = ["case_id", "outcome", "chunkings"]


class BaselineError(Exception):
    """A baseline directory that cannot be used."""


@dataclass(frozen=True)
class Baseline:
    """Outcome labels per (case, chunking) and the pins of the runs they came from."""

    outcomes: pd.DataFrame
    stamp: dict[str, object]


@dataclass(frozen=True)
class GateResult:
    """A run checked against a baseline: regressions, kind changes, improvements, new rows, strictness."""

    rows: pd.DataFrame
    not_run: int
    verdict: Verdict

    def of(self, change: Change) -> pd.DataFrame:
        """The rows that changed in one way."""
        return self.rows[self.rows["change"] == change.value]

    @property
    def passed(self) -> bool:
        """No regression, no unexpected match, no stale known divergence."""
        return self.of(Change.REGRESSION).empty and not self.verdict.strict_failures


def read_baseline(directory: Path) -> Baseline:
    """Read a baseline directory (an absent one is empty): a line per case and outcome, with its chunkings."""
    file = directory / OUTCOMES
    if not file.exists():
        return Baseline(outcomes=pd.DataFrame(columns=COLUMNS), stamp={})
    lines = pd.read_csv(file, dtype=str, keep_default_na=False)
    if list(lines.columns) != FILE_COLUMNS:
        raise BaselineError(
            f"{file}: expected columns {','.join(FILE_COLUMNS)}, found {','.join(lines.columns)}"
        )
    outcomes = pd.DataFrame(
        [
            (case, chunking, outcome)
            for case, outcome, chunkings in lines.itertuples(index=False)
            for chunking in chunkings.split()
        ],
        columns=COLUMNS,
    )
    duplicated = outcomes[outcomes.duplicated(["case_id", "chunking"])]
    if not duplicated.empty:
        first = duplicated.iloc[0]
        raise BaselineError(f"{file}: row {first['case_id']} {first['chunking']} is listed twice")
    stamp_file = directory / STAMP
    stamp = json.loads(stamp_file.read_text(encoding="utf-8")) if stamp_file.exists() else {}
    return Baseline(outcomes=outcomes, stamp=stamp)


def run_outcomes(run: Run) -> pd.DataFrame:
    """A run's rows as baseline records."""
    return pd.DataFrame(
        {
            "case_id": run.rows["case_id"],
            "chunking": run.rows["chunking"],
            "outcome": [
                outcome_label(outcome, kind) for outcome, kind in zip(run.rows["outcome"], run.rows["kind"])
            ],
        }
    )


def write_baseline(directory: Path, baseline: Baseline) -> None:
    """Write a baseline: a sorted line per case and outcome with its chunkings, byte-stable and diffable."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = (
        baseline.outcomes.groupby(["case_id", "outcome"], sort=True)["chunking"]
        .apply(lambda chunkings: " ".join(sorted(chunkings)))
        .rename("chunkings")
        .reset_index()
    )
    lines[FILE_COLUMNS].to_csv(directory / OUTCOMES, index=False, lineterminator="\n")
    (directory / STAMP).write_text(
        json.dumps(baseline.stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


def baseline_stamp(run: Run) -> dict[str, object]:
    """The part of a run's stamp a baseline keeps: its pins and the parser."""
    return {key: run.stamp.get(key) for key in (*PIN_KEYS, "parser")}


def check_pins(baseline: Baseline, run: Run, allow: bool) -> list[str]:
    """The pin differences of a run from a baseline; raise unless allowed (an empty baseline has no pins)."""
    if not baseline.stamp:
        return []
    differences = pin_differences(baseline.stamp, run.stamp)
    if differences and not allow:
        raise BaselineError(
            "the run's pins differ from the baseline's: "
            + "; ".join(differences)
            + " (pass --allow-pin-mismatch to check anyway)"
        )
    return differences


def check(baseline: Baseline, run: Run, verdict: Verdict) -> GateResult:
    """Compare the rows that ran with the baseline."""
    info = run.rows[["case_id", "chunking", "template", "mode", "shape", "detail", "error"]]
    head = run_outcomes(run).merge(info, on=["case_id", "chunking"])
    joined = head.merge(baseline.outcomes, on=["case_id", "chunking"], how="left", suffixes=("", "_base"))
    base = [None if pd.isna(label) else label for label in joined["outcome_base"]]
    rows = pd.DataFrame(
        {
            "template": joined["template"],
            "mode": joined["mode"],
            "shape": joined["shape"],
            "chunking": joined["chunking"],
            "case_id": joined["case_id"],
            "base": base,
            "head": joined["outcome"],
            "detail": joined["detail"].where(joined["detail"] != "", joined["error"]),
        }
    )
    rows["change"] = [classify_change(b, h).value for b, h in zip(base, joined["outcome"])]
    rows = rows.sort_values(["template", "mode", "shape", "case_id", "chunking"], kind="stable").reset_index(
        drop=True
    )
    ran = set(zip(run.rows["case_id"], run.rows["chunking"]))
    not_run = sum(
        1 for key in zip(baseline.outcomes["case_id"], baseline.outcomes["chunking"]) if key not in ran
    )
    return GateResult(rows=rows, not_run=not_run, verdict=verdict)


def update(baseline: Baseline, run: Run) -> Baseline:
    """The baseline with the rows that ran replaced by their new outcomes; rows that did not run are kept."""
    fresh = run_outcomes(run)
    ran = pd.MultiIndex.from_frame(fresh[["case_id", "chunking"]])
    kept = baseline.outcomes[~pd.MultiIndex.from_frame(baseline.outcomes[["case_id", "chunking"]]).isin(ran)]
    return Baseline(outcomes=pd.concat([kept, fresh], ignore_index=True), stamp=baseline_stamp(run))
