"""failures.csv: every row that does not cleanly match, one line each, written in pieces."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from chatparity.files import replacing
from harness.outcome_labels import LABEL_COLUMNS
from reports.groups import per_distinct
from reports.show import show_command
from reports.statuses import STREAM_CHECKS, STRUCTURAL_CHECKS, Status, failing_mask, run_labels

CHECKS = (*STREAM_CHECKS, *STRUCTURAL_CHECKS)
READ = list(dict.fromkeys(["status", "template", "mode", "origin", "shape", "chunking", "case_id", *LABEL_COLUMNS,
                           "detail", "error", "stream_detail", "structure_detail"]))
COLUMNS = ["status", "template", "mode", "origin", "shape", "chunking", "label", "detail", "case_id", "show"]
ORDER = ["template", "mode", "origin", "shape", "case_id", "chunking"]
PIECE_ROWS = 50_000


def failing_index(rows: pd.DataFrame) -> pd.Index:
    """The rows that differ from llama.cpp's or fail (policies, llama.cpp defects, bugs, errors, broken
    checks), in file order."""
    shown = (~rows["status"].isin([Status.MATCH.value, Status.UNSUPPORTED.value])) | failing_mask(rows)
    return rows.loc[shown, ORDER].sort_values(ORDER, kind="stable").index


def first_text(rows: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Per row, the first of `columns` that is not empty (the last when all are)."""
    text = rows[columns[-1]]
    for column in reversed(columns[:-1]):
        text = rows[column].where(rows[column] != "", text)
    return text


def failure_lines(rows: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """failures.csv's lines for `rows`: their label, first detail and the command that shows their case."""
    return rows.assign(
        label=run_labels(rows),
        detail=first_text(rows, ["detail", "error", "stream_detail", "structure_detail"]),
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
