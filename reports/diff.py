"""Base-versus-head comparison of two runs: regressions, fixes, changed failure kinds, new and gone rows."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd

from harness.outcome_labels import failing_label, label_checks, label_outcome, label_reading
from reports.expectations import check_same_parser
from reports.runs import Run, pin_differences
from reports.show import show_command
from reports.statuses import STRUCTURAL_CHECKS, run_labels
from reports.tables import markdown_table, records

KEYS = ["case_id", "chunking"]
INFO = ["template", "family", "syntax", "mode", "origin", "shape", "partial"]
TOP = 15
WIDTH = 100
TITLES = {
    "regression": "Regressions",
    "kind change": "Kind changes",
    "fix": "Fixes",
    "new": "New rows that fail",
    "relabelled": "Rows accounted for otherwise (policy, llama.cpp defect or match)",
}


class Change(str, Enum):
    """How a row moved from base to head."""

    REGRESSION = "regression"
    FIX = "fix"
    KIND_CHANGE = "kind change"
    RELABEL = "relabelled"
    NEW = "new"
    GONE = "gone"
    SAME = "same"


COUNTED = (Change.REGRESSION, Change.FIX, Change.KIND_CHANGE, Change.RELABEL, Change.NEW, Change.GONE)


class PinMismatch(Exception):
    """Two runs whose pins (llama.cpp commit, template index, profile) differ."""


@dataclass(frozen=True)
class RunDiff:
    """Every row of either run with its base and head outcome and how it changed, plus pin warnings."""

    rows: pd.DataFrame
    warnings: tuple[str, ...]

    def of(self, change: Change) -> pd.DataFrame:
        """The rows that changed in one way."""
        return self.rows[self.rows["change"] == change.value]


def more_breaks(base: dict[str, int | None], head: dict[str, int | None]) -> bool:
    """Whether a check breaks in the head that did not in the base, or in more snapshots (both counted)."""
    return any(
        check not in base or (count is not None and (before := base[check]) is not None and count > before)
        for check, count in head.items()
    )


def classify_change(base: str | None, head: str | None) -> Change:
    """The change from a base label to a head one (None: the row is absent). A row that passed (matched, or
    differed as a policy or a llama.cpp defect says) and now fails is a regression, and the reverse a fix; one
    that passes either way but is accounted for otherwise is relabelled. Between two failures: a regression when
    a mismatch reads otherwise than before (both labels pin its reading) or breaks a check it did not, or in more
    snapshots; a fix when it fails as before in fewer; else a kind change."""
    if base is None:
        return Change.NEW
    if head is None:
        return Change.GONE
    if base == head:
        return Change.SAME
    base_fails, head_fails = failing_label(base), failing_label(head)
    if not base_fails:
        return Change.REGRESSION if head_fails else Change.RELABEL
    if not head_fails:
        return Change.FIX
    base_outcome, head_outcome = label_outcome(base), label_outcome(head)
    base_checks, head_checks = label_checks(base), label_checks(head)
    readings = {label_reading(base), label_reading(head)}
    reads_otherwise = base_outcome == head_outcome and "" not in readings and len(readings) == 2
    if reads_otherwise or more_breaks(base_checks, head_checks):
        return Change.REGRESSION
    if head_outcome == base_outcome:
        return Change.SAME if not more_breaks(head_checks, base_checks) else Change.FIX
    return Change.KIND_CHANGE


def check_pins(base: Run, head: Run, allow: bool) -> tuple[str, ...]:
    """Refuse runs with different pins, or return loud warnings when allowed."""
    differences = pin_differences(base.stamp, head.stamp)
    if differences and not allow:
        raise PinMismatch(
            "runs are not comparable, their pins differ: "
            + "; ".join(differences)
            + " (pass --allow-pin-mismatch to compare anyway)"
        )
    return tuple(f"WARNING: comparing runs whose pins differ: {difference}" for difference in differences)


def first_detail(rows: pd.DataFrame) -> pd.Series:
    """Each row's first non-empty detail: the mismatch, the error, the broken stream check, the broken
    structural check."""
    detail = rows["detail"]
    for column in ("error", "stream_detail", "structure_detail"):
        detail = detail.where(detail != "", rows[column])
    return detail


def _labelled(run: Run) -> pd.DataFrame:
    """A run's rows keyed by case and chunking with their outcome labels and row info."""
    rows = run.rows
    return pd.DataFrame(
        {
            **{key: rows[key] for key in KEYS},
            **{key: rows[key] for key in INFO},
            "label": run_labels(rows),
            "detail": first_detail(rows),
        }
    )


def diff_runs(base: Run, head: Run, allow_pin_mismatch: bool = False, allow_other_parser: bool = False) -> RunDiff:
    """Compare two runs row by row by their labels; runs of different parsers are refused unless allowed."""
    warnings = (
        *check_same_parser(base.stamp, head.stamp, "the base run", allow_other_parser),
        *check_pins(base, head, allow_pin_mismatch),
    )
    left, right = _labelled(base), _labelled(head)
    joined = left.merge(right, on=KEYS, how="outer", suffixes=("_base", "_head"), indicator=True)
    frame = pd.DataFrame({key: joined[key] for key in KEYS})
    for key in INFO:
        frame[key] = joined[f"{key}_head"].where(joined["_merge"] != "left_only", joined[f"{key}_base"])
    base_labels = [None if pd.isna(label) else label for label in joined["label_base"]]
    head_labels = [None if pd.isna(label) else label for label in joined["label_head"]]
    frame["base"], frame["head"] = base_labels, head_labels
    frame["detail"] = (
        joined["detail_head"].where(joined["detail_head"].fillna("") != "", joined["detail_base"]).fillna("")
    )
    frame["change"] = [classify_change(b, h).value for b, h in zip(base_labels, head_labels)]
    frame = frame.sort_values(["template", "mode", "shape", "case_id", "chunking"], kind="stable")
    return RunDiff(rows=frame.reset_index(drop=True), warnings=warnings)


def new_failures(diff: RunDiff) -> pd.DataFrame:
    """New rows that fail: their label is a failure of the parser's."""
    new = diff.of(Change.NEW)
    return new.loc[np.array([failing_label(str(label)) for label in new["head"]], dtype=bool)].reset_index(drop=True)


def change_counts(diff: RunDiff, by: str) -> pd.DataFrame:
    """Per group (family or template): how many rows regressed, were fixed, changed kind, are new or gone."""
    changed = diff.rows[diff.rows["change"] != Change.SAME.value]
    columns = [change.value for change in COUNTED]
    if changed.empty:
        return pd.DataFrame(columns=[by, *columns])
    table = pd.crosstab(changed[by], changed["change"]).reindex(columns=columns, fill_value=0)
    return table.reset_index().rename_axis(None, axis=1)


def check_counts(diff: RunDiff) -> pd.DataFrame:
    """Per structural check: how many rows of the base and of the head break it where llama.cpp holds it."""
    counts = []
    for check in STRUCTURAL_CHECKS:
        base, head = (
            sum(1 for label in diff.rows[side] if isinstance(label, str) and check in label_checks(label))
            for side in ("base", "head")
        )
        counts.append({"check": check, "base": base, "head": head})
    return pd.DataFrame(counts, columns=["check", "base", "head"])


def totals(diff: RunDiff) -> dict[str, int]:
    """Row counts per change, and rows compared."""
    counts = {change.value: int((diff.rows["change"] == change.value).sum()) for change in Change}
    return {"rows": len(diff.rows), **counts}


def _shown(rows: pd.DataFrame, head_name: str) -> pd.DataFrame:
    """The columns a person reads for a changed row, and the command that shows its case in the head run."""
    shown = rows[["template", "mode", "shape", "chunking", "case_id", "base", "head", "detail"]].fillna("")
    return shown.assign(show=[f"`{show_command(case, head_name)}`" for case in shown["case_id"]])


def diff_markdown(
    diff: RunDiff, base_name: str, head_name: str, full_report: str = "", top: int = TOP
) -> str:
    """A PR-comment sized markdown: counts, per-family counts, the top changed rows and where the rest is."""
    count = totals(diff)
    headline = pd.DataFrame(
        [{change.value: count[change.value] for change in COUNTED} | {"unchanged": count["same"]}]
    )
    parts = [f"## chatparity diff: {base_name} → {head_name}", ""]
    parts += [f"> **{warning}**" for warning in diff.warnings]
    if diff.warnings:
        parts.append("")
    parts.append(markdown_table(headline))
    parts += ["", "### Structural checks the parser breaks where llama.cpp does not", ""]
    parts.append(markdown_table(check_counts(diff)))
    for by in ("family", "template"):
        counts = change_counts(diff, by)
        counts = counts.sort_values(
            [Change.REGRESSION.value, Change.KIND_CHANGE.value, Change.FIX.value, by],
            ascending=[False, False, False, True],
            kind="stable",
        )
        parts += ["", f"### Per {by} ({len(counts)} with changes)", "", markdown_table(counts.head(top))]
        if len(counts) > top:
            parts += ["", f"…and {len(counts) - top} others."]
    parts.append("")
    for change in (Change.REGRESSION, Change.KIND_CHANGE, Change.FIX, Change.NEW, Change.RELABEL):
        rows = diff.of(change)
        if change is Change.NEW:
            rows = new_failures(diff)
        if rows.empty:
            continue
        parts += [
            f"### {TITLES[change.value]} ({len(rows)})",
            "",
            markdown_table(_shown(rows.head(top), head_name), WIDTH),
            "",
        ]
        if len(rows) > top:
            parts += [f"…and {len(rows) - top} others.", ""]
    if full_report:
        parts += [f"Full report: {full_report}", ""]
    return "\n".join(parts)


def diff_json(diff: RunDiff, base_name: str, head_name: str) -> dict[str, Any]:
    """The whole diff for machines: counts overall, per family and per template, and every changed row."""
    changed = diff.rows[diff.rows["change"] != Change.SAME.value]
    return {
        "base": base_name,
        "head": head_name,
        "warnings": list(diff.warnings),
        "counts": totals(diff),
        "structural_checks": records(check_counts(diff)),
        "per_family": records(change_counts(diff, "family")),
        "per_template": records(change_counts(diff, "template")),
        "rows": records(changed),
    }
