"""A parser's expectations (its known divergences and gate baseline), and the rows of a run beyond them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from harness.parser_specs import PROJECT_EXPECTATIONS, PROJECT_ROOT
from reports.statuses import (
    READING_MARK,
    STREAM_CHECKS,
    STRUCTURAL_CHECKS,
    Status,
    label_outcome,
    outcome_label,
    plain_rows,
    reading_digest,
    structural_break_mask,
    structural_breaks,
)

PROJECT_PARSER = "reply"
DIVERGENCES_FILE = "known_divergences.toml"
BASELINE_DIR = "baseline"
QUICK_PROFILES = ("quick", "")
"""The profile whose baseline is baseline/ ('' for a stamp older than the profile field)."""
COUNTED_CHECKS = {"clean": "clean_breaks", "snapshot_parity": "parity_breaks"}
FAILING = (Status.MISMATCH.value, Status.PARSER_ERROR.value, Status.ORACLE_ERROR.value)
LABEL_COLUMNS = (
    "outcome",
    "kind",
    "parser_reading",
    *STREAM_CHECKS,
    *COUNTED_CHECKS.values(),
    *STRUCTURAL_CHECKS,
    *(f"oracle_{check}" for check in STRUCTURAL_CHECKS),
)


class ParserMismatch(Exception):
    """Two runs, or a run and a baseline, of different parsers."""


@dataclass(frozen=True)
class Expectations:
    """Where a parser's expectations live: a directory holding known_divergences.toml and baseline/ (None: none)."""

    directory: Path | None

    @property
    def divergences(self) -> Path | None:
        """The known-divergences file (None when the parser has none)."""
        if self.directory is None or not (self.directory / DIVERGENCES_FILE).exists():
            return None
        return self.directory / DIVERGENCES_FILE

    def baseline(self, profile: str) -> Path | None:
        """The gate baseline directory of runs of a profile: baseline/ for the quick profile, baseline-PROFILE/
        for another (None when the parser has no expectations directory)."""
        if self.directory is None:
            return None
        return self.directory / (BASELINE_DIR if profile in QUICK_PROFILES else f"{BASELINE_DIR}-{profile}")

    def describe(self) -> str:
        """Where the expectations are, for messages."""
        return "none" if self.directory is None else str(self.directory)


def expectations_of(stamp: dict[str, Any]) -> Expectations:
    """A run's expectations as its stamp names them, a relative directory found from the working directory or
    else the project root (runs older than the field: the project's for `reply`)."""
    if "expectations" not in stamp:
        return Expectations(
            PROJECT_ROOT / PROJECT_EXPECTATIONS if stamp.get("parser") == PROJECT_PARSER else None
        )
    if not stamp["expectations"]:
        return Expectations(None)
    declared = Path(stamp["expectations"])
    if declared.is_absolute() or declared.exists():
        return Expectations(declared)
    return Expectations(PROJECT_ROOT / declared)


def baseline_of(stamp: dict[str, Any]) -> Path | None:
    """The gate baseline directory of a run, by its stamp's expectations and profile (None: it has none)."""
    return expectations_of(stamp).baseline(str(stamp.get("profile") or ""))


def check_same_parser(base: dict[str, Any], head: dict[str, Any], what: str, allow: bool) -> list[str]:
    """Refuse to compare two stamps of different parsers unless allowed; the warning when allowed."""
    if not base.get("parser") or base.get("parser") == head.get("parser"):
        return []
    difference = f"{what} is of parser {base.get('parser')!r}, the run of {head.get('parser')!r}"
    if not allow:
        raise ParserMismatch(f"{difference} (pass --allow-other-parser to compare them anyway)")
    return [f"WARNING: {difference}"]


def broken_checks(row: Any) -> list[str]:
    """The stream and structural checks a row breaks that count against the parser. Stream checks: all it
    breaks where its snapshots depart from llama.cpp's (snapshot_parity broken) or its final reading does; none
    where both are llama.cpp's, since a stream that is llama.cpp's own is no fault of the parser (llama.cpp's own
    stream may end otherwise than its whole read, retract text or show a marker). Structural checks: those its
    final reading breaks where llama.cpp's holds."""
    streamed = (
        []
        if row.snapshot_parity != 0 and row.outcome == "match"
        else [check for check in STREAM_CHECKS if getattr(row, check) == 0]
    )
    return streamed + structural_breaks(row)


def counted(check: str, row: Any) -> str:
    """A broken check as a label names it, with how many snapshots break it where the row counts them:
    'snapshot_parity=12', 'monotonic'."""
    count = getattr(row, COUNTED_CHECKS[check], None) if check in COUNTED_CHECKS else None
    return check if count is None or pd.isna(count) else f"{check}={int(count)}"


def row_label(outcome: str, kind: str, broken: list[str], reading: str = "") -> str:
    """A row's label as baselines and diffs compare it: 'match !clean=2,monotonic', and for a mismatch the
    digest of the parser's `reading` (JSON text) where given, 'mismatch:calls @0a1b2c3d4e', so a mismatch
    that reads otherwise is a change."""
    label = outcome_label(outcome, kind)
    if reading and outcome == Status.MISMATCH.value:
        label += READING_MARK + reading_digest(reading)
    return f"{label} !{','.join(broken)}" if broken else label


def run_labels(rows: pd.DataFrame) -> list[str]:
    """The label of every row of a run, its counted stream checks with their counts."""
    return [
        row_label(row.outcome, row.kind, [counted(check, row) for check in broken_checks(row)],
                  str(row.parser_reading or ""))
        for row in plain_rows(rows, LABEL_COLUMNS)
    ]


def failing(rows: pd.DataFrame) -> pd.Series:
    """Rows that mismatch (not a known divergence), crash, time out, stream otherwise than llama.cpp, or break
    a structural check that llama.cpp's reading holds."""
    return rows["status"].isin(FAILING) | (rows["snapshot_parity"] == 0) | structural_break_mask(rows)


def declined_matches(rows: pd.DataFrame, baseline: pd.DataFrame) -> pd.Series:
    """Rows the parser now declines (unsupported, its render failed) that its baseline records as matching."""
    declined = rows["outcome"] == Status.UNSUPPORTED.value
    asked = set(zip(rows.loc[declined, "case_id"], rows.loc[declined, "chunking"]))
    recorded_cases = baseline[baseline["case_id"].isin({case for case, _ in asked})]
    matched = {
        (case, chunking)
        for case, chunking, label in zip(
            recorded_cases["case_id"], recorded_cases["chunking"], recorded_cases["outcome"]
        )
        if (case, chunking) in asked and label_outcome(str(label)) == Status.MATCH.value
    }
    recorded = [key in matched for key in zip(rows.loc[declined, "case_id"], rows.loc[declined, "chunking"])]
    return declined & pd.Series(recorded, index=declined[declined].index, dtype=bool).reindex(
        rows.index, fill_value=False
    )


def beyond(rows: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """The failing rows of a classified run that its baseline does not record as failing the same way, and the
    rows it declines that the baseline records as matching (labelled and compared on the few columns a label
    reads; only the rows beyond are copied whole).

    `rows` carry a status (known divergences applied); `baseline` has case_id, chunking and outcome labels.
    """
    bad = failing(rows) | declined_matches(rows, baseline)
    if not bad.any():
        return rows[bad].assign(label=pd.Series(dtype=str), expected=pd.Series(dtype=str))
    keys = ["case_id", "chunking"]
    read = [name for name in dict.fromkeys([*keys, *LABEL_COLUMNS]) if name in rows.columns]
    labelled = rows.loc[bad, read]
    labels = pd.Series(run_labels(labelled), index=labelled.index, dtype="str")
    recorded = baseline.rename(columns={"outcome": "expected"})[[*keys, "expected"]]
    expected = labelled[keys].merge(recorded, on=keys, how="left")["expected"].fillna("")
    expected.index = labelled.index
    differs = labels != expected
    return (
        rows.loc[differs[differs].index]
        .assign(label=labels[differs], expected=expected[differs])
        .reset_index(drop=True)
    )
