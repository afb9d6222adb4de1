"""A run judged against its parser's baseline: the verdict every report opens with.

A row fails when its label is a failure of the parser's (a mismatch no policy, known divergence or llama.cpp defect
accounts for, an error, a check it breaks). It fails the run when the baseline does not record it failing the same
way: a regression (it passed there, or fails more), a new failing row, a failure of another kind; or when the
parser now declines a row the baseline records as matching. Failing rows the baseline records alike pass, but are
listed: accepted by the baseline without a reason, each a bug to fix or a rule to name (llama.cpp's own errors
the baseline records are counted with its defects instead)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from harness.labels import counts_of, is_defect
from harness.outcome_labels import failing_label, label_outcome
from reports.baselines import outcomes_file, read_baseline
from reports.diff import Change, classify_change, first_detail
from reports.divergences import Verdict
from reports.runs import Run
from reports.statuses import ORACLE_ERRORS, Status, failing_mask, run_labels

KEYS = ["case_id", "chunking"]
SHOWN = ["template", "mode", "shape", "chunking", "case_id", "session_id", "base", "head", "detail"]
PASSING_CHANGES = (Change.SAME.value, Change.FIX.value)


@dataclass(frozen=True)
class Judgement:
    """What a run's rows say against the baseline: the failing rows by how they fail it, the rows each policy and
    llama.cpp defect accounts for, and the strictness failures of the expectations."""

    regressions: pd.DataFrame
    new_failures: pd.DataFrame
    declined: pd.DataFrame
    accepted: pd.DataFrame
    fixed: int
    policy_rows: Counter[str]
    policy_snapshots: Counter[str]
    defect_rows: Counter[str]
    defect_snapshots: Counter[str]
    policy_total: int
    defect_total: int
    oracle_errors: int
    lost: tuple[str, ...]
    strict: int
    baseline: str = ""
    checked: int = field(default=0)

    @property
    def failures(self) -> pd.DataFrame:
        """Every row that fails the run, regressions first."""
        return pd.concat([self.regressions, self.new_failures, self.declined], ignore_index=True)

    @property
    def passed(self) -> bool:
        """No row fails the run, no sweep item was lost, and the expectations are strict."""
        return self.failures.empty and not self.lost and not self.strict

    def lines(self) -> list[str]:
        """The verdict in four lines: PASS or FAIL with the changes against the baseline, then what policies,
        the baseline and llama.cpp's defects account for."""
        against = f" against {self.baseline}" if self.baseline else " (no baseline)"
        head = (
            f"{'PASS' if self.passed else 'FAIL'}{against}: {len(self.regressions)} regressions, "
            f"{len(self.new_failures)} new failing rows, {len(self.declined)} rows now declined, "
            f"{self.fixed} fixed"
        )
        if self.lost:
            head += f"; {len(self.lost)} sweep items lost (first: {self.lost[0]})"
        if self.strict:
            head += f"; {self.strict} expectations no longer hold (unexpected matches, stale entries)"
        return [
            head,
            f"  accepted by policy: {self.policy_total:,} rows, {sum(self.policy_snapshots.values()):,} snapshots"
            + per_name(self.policy_rows, self.policy_snapshots),
            f"  accepted by the baseline without a reason: {len(self.accepted):,} rows"
            + (" (each a parser bug to fix or a rule to name)" if len(self.accepted) else ""),
            (
                f"  llama.cpp defects behind differences (never blamed on the parser): {self.defect_total:,} whole "
                f"readings, "
                f"{sum(self.defect_snapshots.values()):,} stream snapshots; llama.cpp errors: "
                f"{self.oracle_errors:,} rows"
            ),
        ]


def per_name(rows: Counter[str], snapshots: Counter[str]) -> str:
    """Each name's rows and snapshots, most first: ' (name 12 rows, 3 snapshots; …)'."""
    names = sorted(set(rows) | set(snapshots), key=lambda name: (-(rows[name] + snapshots[name]), name))
    if not names:
        return ""
    parts = [f"{name} {rows[name]:,} rows, {snapshots[name]:,} snapshots" for name in names]
    return " (" + "; ".join(parts) + ")"


def label_counts(rows: pd.DataFrame) -> tuple[Counter[str], Counter[str], Counter[str], Counter[str]]:
    """Rows and snapshots per policy name and per llama.cpp defect: a row counts once under each name of its
    label, a snapshot likewise."""
    policy_rows: Counter[str] = Counter()
    defect_rows: Counter[str] = Counter()
    for status, counter in ((Status.POLICY, policy_rows), (Status.DEFECT, defect_rows)):
        for label, count in rows.loc[rows["status"] == status.value, "explained"].value_counts().items():
            for name in str(label).split("+"):
                counter[name] += int(count)
    policy_snapshots: Counter[str] = Counter()
    defect_snapshots: Counter[str] = Counter()
    for text, times in rows["parity_explained"].fillna("").value_counts().items():
        for label, count in counts_of(str(text)).items():
            target = defect_snapshots if is_defect(label) else policy_snapshots
            for name in label.split("+") if not is_defect(label) else [label]:
                target[name] += count * int(times)
    return policy_rows, policy_snapshots, defect_rows, defect_snapshots


def judge(run: Run, verdict: Verdict, baseline: pd.DataFrame | None, where: str = "") -> Judgement:
    """Judge a classified run against a baseline's labels (case_id, chunking, outcome; None: no baseline)."""
    rows = verdict.rows
    recorded = baseline if baseline is not None else pd.DataFrame(columns=[*KEYS, "outcome"])
    failing = rows[failing_mask(rows)]
    shown = failing[[name for name in SHOWN if name in failing.columns]].assign(
        head=run_labels(failing), detail=first_detail(failing), llama_error=failing["outcome"].isin(ORACLE_ERRORS)
    )
    shown = shown.merge(recorded[[*KEYS, "outcome"]].rename(columns={"outcome": "base"}), on=KEYS, how="left")
    shown["base"] = shown["base"].astype(object).where(shown["base"].notna(), None)
    shown["change"] = [classify_change(base, head).value for base, head in zip(shown["base"], shown["head"])]
    declined = declined_matches(rows, recorded)
    policy_rows, policy_snapshots, defect_rows, defect_snapshots = label_counts(rows)
    return Judgement(
        regressions=shown[~shown["change"].isin([*PASSING_CHANGES, Change.NEW.value])].reset_index(drop=True),
        new_failures=shown[shown["change"] == Change.NEW.value].reset_index(drop=True),
        declined=declined,
        accepted=shown[(shown["change"] == Change.SAME.value) & ~shown["llama_error"]].reset_index(drop=True),
        fixed=fixed_rows(rows, recorded),
        policy_rows=policy_rows,
        policy_snapshots=policy_snapshots,
        defect_rows=defect_rows,
        defect_snapshots=defect_snapshots,
        policy_total=int((rows["status"] == Status.POLICY.value).sum()),
        defect_total=int((rows["status"] == Status.DEFECT.value).sum()),
        oracle_errors=int(rows["outcome"].isin(ORACLE_ERRORS).sum()),
        lost=tuple(run.lost),
        strict=verdict.strict_failures,
        baseline=where,
    )


def fixed_rows(rows: pd.DataFrame, recorded: pd.DataFrame) -> int:
    """How many rows the baseline records failing that ran and no longer fail."""
    failed = recorded.loc[np.array([failing_label(str(label)) for label in recorded["outcome"]], dtype=bool)]
    if failed.empty:
        return 0
    ran = rows.merge(failed[KEYS], on=KEYS, how="inner")
    return int((~failing_mask(ran)).sum())


def declined_matches(rows: pd.DataFrame, recorded: pd.DataFrame) -> pd.DataFrame:
    """Rows the parser now declines (unsupported) that the baseline records as matching."""
    declined = rows[rows["outcome"] == Status.UNSUPPORTED.value]
    if declined.empty or recorded.empty:
        return pd.DataFrame(columns=[*SHOWN, "change"])
    joined = declined.merge(recorded[[*KEYS, "outcome"]].rename(columns={"outcome": "base"}), on=KEYS)
    joined = joined.loc[np.array([label_outcome(str(label)) == Status.MATCH.value for label in joined["base"]],
                                 dtype=bool)]
    return joined.assign(head=Status.UNSUPPORTED.value, detail=joined["error"], change=Change.REGRESSION.value)[
        [*SHOWN, "change"]
    ].reset_index(drop=True)


def judge_run(run: Run, verdict: Verdict, directory: Path | None) -> Judgement:
    """Judge a run against the baseline in `directory` (None, or a directory without one: no baseline)."""
    if directory is None or outcomes_file(directory) is None:
        return judge(run, verdict, None)
    return judge(run, verdict, read_baseline(directory).outcomes, str(directory))
