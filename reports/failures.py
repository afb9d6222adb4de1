"""failures.csv: every row that does not cleanly match, one line each, written in pieces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from chatparity.files import replacing
from reports.expectations import row_label
from reports.groups import combinations, per_distinct
from reports.show import show_command
from reports.statuses import STREAM_CHECKS, STRUCTURAL_CHECKS, Status

CHECKS = (*STREAM_CHECKS, *STRUCTURAL_CHECKS)
READ = ["status", "template", "mode", "origin", "shape", "chunking", "case_id", "outcome", "kind", *CHECKS,
        "detail", "error", "stream_detail", "structure_detail", "divergence"]
COLUMNS = ["status", "template", "mode", "origin", "shape", "chunking", "label", "detail", "case_id", "show"]
ORDER = ["template", "mode", "origin", "shape", "case_id", "chunking"]
PIECE_ROWS = 50_000


def failing_index(rows: pd.DataFrame) -> pd.Index:
    """The rows that do not cleanly match (known divergences and broken checks included), in file order."""
    broken = pd.Series(False, index=rows.index)
    for check in CHECKS:
        broken |= rows[check] == 0
    shown = (~rows["status"].isin([Status.MATCH.value, Status.UNSUPPORTED.value])) | broken
    return rows.loc[shown, ORDER].sort_values(ORDER, kind="stable").index


def labels(rows: pd.DataFrame) -> np.ndarray:
    """Each row's label (outcome, kind and the checks it breaks), made once per distinct combination of them."""
    codes, distinct = combinations(rows, ["outcome", "kind", *CHECKS])
    made = [
        row_label(row.outcome, row.kind, [check for check in CHECKS if getattr(row, check) == 0])
        for row in distinct.itertuples()
    ]
    return np.array(made, dtype=object)[codes]


def first_text(rows: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Per row, the first of `columns` that is not empty (the last when all are)."""
    text = rows[columns[-1]]
    for column in reversed(columns[:-1]):
        text = rows[column].where(rows[column] != "", text)
    return text


def failure_lines(rows: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """failures.csv's lines for `rows`: their label, first detail and the command that shows their case."""
    return rows.assign(
        label=labels(rows),
        detail=first_text(rows, ["detail", "error", "stream_detail", "structure_detail", "divergence"]),
        show=per_distinct(rows["case_id"], lambda case: show_command(case, run_dir)),
    )[COLUMNS]


def write_failures(path: Path, rows: pd.DataFrame, run_dir: Path, piece_rows: int = PIECE_ROWS) -> Path:
    """Write failures.csv for a classified run's rows, `piece_rows` lines at a time."""
    index = failing_index(rows)
    with replacing(path) as partial, partial.open("w", encoding="utf-8", newline="") as file:
        if index.empty:
            pd.DataFrame(columns=COLUMNS).to_csv(file, index=False, lineterminator="\n")
        for start in range(0, len(index), piece_rows):
            piece = failure_lines(rows.loc[index[start:start + piece_rows], READ], run_dir)
            piece.to_csv(file, index=False, header=start == 0, lineterminator="\n")
    return path
