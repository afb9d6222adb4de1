"""Base-versus-head comparison of two runs: regressions, fixes, changed failure kinds, new and gone rows."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import pandas as pd

from reports.expectations import check_same_parser, run_labels
from reports.runs import Run, pin_differences
from reports.show import show_command
from reports.statuses import STRUCTURAL_CHECKS, Status, label_outcome, label_reading
from reports.tables import markdown_table, records

KEYS = ["case_id", "chunking"]
GATED_ALWAYS = ("consistent", "monotonic", *STRUCTURAL_CHECKS)
NEW_ROW_FAILURES = (Status.MISMATCH.value, Status.PARSER_ERROR.value)
INFO = ["template", "family", "syntax", "mode", "origin", "shape", "partial"]
TOP = 15
WIDTH = 100
TITLES = {
    "regression": "Regressions",
    "kind change": "Kind changes",
    "fix": "Fixes",
    "new": "New rows that do not match",
}


class Change(str, Enum):
    """How a row moved from base to head."""

    REGRESSION = "regression"
    FIX = "fix"
    KIND_CHANGE = "kind change"
    NEW = "new"
    GONE = "gone"
    SAME = "same"


COUNTED = (Change.REGRESSION, Change.FIX, Change.KIND_CHANGE, Change.NEW, Change.GONE)


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


def label_checks(label: str) -> dict[str, int | None]:
    """The checks an outcome label breaks, each with how many snapshots break it (None: not counted):
    'match !clean=2,monotonic' -> {'clean': 2, 'monotonic': None}."""
    _, _, broken = label.partition(" !")
    checks: dict[str, int | None] = {}
    for item in broken.split(",") if broken else []:
        check, _, count = item.partition("=")
        checks[check] = int(count) if count else None
    return checks


def split_label(label: str) -> tuple[str, frozenset[str]]:
    """An outcome label's outcome and the checks it breaks: 'match !clean=2' -> ('match', {'clean'})."""
    return label_outcome(label), frozenset(label_checks(label))


def more_breaks(base: dict[str, int | None], head: dict[str, int | None]) -> bool:
    """Whether a check breaks in the head that did not in the base, or in more snapshots (both counted)."""
    return any(
        check not in base or (count is not None and base[check] is not None and count > base[check])
        for check, count in head.items()
    )


def classify_change(base: str | None, head: str | None) -> Change:
    """The change from a base outcome label to a head one (None: the row is absent): a regression when a row
    that matched no longer does, when a mismatch reads otherwise than before (both labels pin its reading), or
    when it breaks a check it did not break before or in more snapshots; the same when only a count one side
    lacks differs."""
    if base is None:
        return Change.NEW
    if head is None:
        return Change.GONE
    if base == head:
        return Change.SAME
    base_outcome, head_outcome = label_outcome(base), label_outcome(head)
    base_checks, head_checks = label_checks(base), label_checks(head)
    readings = {label_reading(base), label_reading(head)}
    reads_otherwise = base_outcome == head_outcome and "" not in readings and len(readings) == 2
    lost_match = base_outcome == "match" and head_outcome != "match"
    if lost_match or reads_otherwise or more_breaks(base_checks, head_checks):
        return Change.REGRESSION
    if head_outcome == base_outcome and not more_breaks(head_checks, base_checks):
        return Change.SAME
    if head_outcome in ("match", base_outcome):
        return Change.FIX
    return Change.KIND_CHANGE


def deliberate_rules_broken(rows: pd.DataFrame, statuses: pd.Series) -> pd.DataFrame:
    """The rows with their change, where a row that 'matches' only by giving up one of the parser's deliberate
    differences from llama.cpp (its status an unexpected match of a known divergence) counts as a regression,
    not a fix."""
    gave_up = (rows["change"] == Change.FIX.value) & (statuses.to_numpy() == Status.UNEXPECTED_MATCH.value)
    return rows.assign(change=rows["change"].where(~gave_up, Change.REGRESSION.value))


def always_failing(label: str) -> bool:
    """Whether a label breaks a check that fails wherever it breaks, baseline or not: `consistent`,
    `monotonic`, or a structural check (labels carry only those llama.cpp's reading holds)."""
    return bool(split_label(label)[1] & set(GATED_ALWAYS))


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


def diff_runs(
    base: Run,
    head: Run,
    allow_pin_mismatch: bool = False,
    allow_other_parser: bool = False,
    head_statuses: pd.DataFrame | None = None,
) -> RunDiff:
    """Compare two runs row by row (raw outcomes with the stream checks they break, known divergences aside);
    runs of different parsers are refused unless allowed. With the head's classified rows (`head_statuses`:
    case_id, chunking, status), a row that matches by giving up a known divergence is a regression."""
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
    if head_statuses is not None:
        status = frame[KEYS].merge(head_statuses[[*KEYS, "status"]], on=KEYS, how="left")["status"]
        frame = deliberate_rules_broken(frame.reset_index(drop=True), status)
    frame = frame.sort_values(["template", "mode", "shape", "case_id", "chunking"], kind="stable")
    return RunDiff(rows=frame.reset_index(drop=True), warnings=warnings)


def new_failures(diff: RunDiff, statuses: pd.DataFrame) -> pd.DataFrame:
    """New rows that fail: a mismatch that is no known divergence or a parser error (by `statuses`, the head
    run's rows with their status), a broken `consistent` or `monotonic`, or a structural check llama.cpp's
    reading holds."""
    new = diff.of(Change.NEW).merge(statuses[[*KEYS, "status"]], on=KEYS, how="left")
    broken = pd.Series([always_failing(label) for label in new["head"]], index=new.index, dtype=bool)
    failing = new["status"].isin(NEW_ROW_FAILURES) | broken
    return new[failing].reset_index(drop=True)


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
            sum(1 for label in diff.rows[side] if isinstance(label, str) and check in split_label(label)[1])
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
    for change in (Change.REGRESSION, Change.KIND_CHANGE, Change.FIX, Change.NEW):
        rows = diff.of(change)
        if change is Change.NEW:
            rows = rows[rows["head"] != "match"]
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
