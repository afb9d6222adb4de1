"""The regression gate: a run's labels checked against its parser's baseline, row by row."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from reports.baselines import Baseline, BaselineError, run_outcomes
from reports.diff import Change, classify_change, first_detail
from reports.divergences import Verdict
from reports.judgement import Judgement, judge
from reports.runs import Run, pin_differences

KEYS = ["case_id", "chunking"]


@dataclass(frozen=True)
class GateResult:
    """A run checked against a baseline: the judgement every report opens with, every row's change, and how many
    baseline rows the run checked."""

    judgement: Judgement
    rows: pd.DataFrame
    not_run: int
    verdict: Verdict
    checked: int = 0

    def of(self, change: Change) -> pd.DataFrame:
        """The rows that changed in one way."""
        return self.rows[self.rows["change"] == change.value]

    @property
    def passed(self) -> bool:
        """The judgement passes and the run checked some row of the baseline."""
        return self.checked > 0 and self.judgement.passed


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


def check(baseline: Baseline, run: Run, verdict: Verdict, where: str = "") -> GateResult:
    """Compare the rows that ran with the baseline."""
    info = run.rows[[*KEYS, "template", "mode", "shape", "detail", "error", "stream_detail", "structure_detail"]]
    head = run_outcomes(run)[[*KEYS, "outcome"]].merge(info, on=KEYS)
    joined = head.merge(baseline.outcomes[[*KEYS, "outcome"]], on=KEYS, how="left", suffixes=("", "_base"))
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
            "detail": first_detail(joined),
        }
    )
    rows["change"] = [classify_change(b, h).value for b, h in zip(base, joined["outcome"])]
    rows = rows.sort_values(["template", "mode", "shape", "case_id", "chunking"], kind="stable").reset_index(
        drop=True
    )
    ran = set(zip(run.rows["case_id"], run.rows["chunking"]))
    not_run = sum(1 for key in zip(baseline.outcomes["case_id"], baseline.outcomes["chunking"]) if key not in ran)
    return GateResult(
        judgement=judge(run, verdict, baseline.outcomes, where),
        rows=rows,
        not_run=not_run,
        verdict=verdict,
        checked=len(baseline.outcomes) - not_run,
    )
