"""How a report counts a row: its outcome as the parser's expectations account for it (the label the sweep stored
with it), and the checks it breaks that are the parser's fault."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Iterator
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd

from chatparity.model import ORACLE_FAILURES, PARSER_FAILURES, STREAM_CHECKS, STRUCTURAL_CHECKS, Kind, Outcome
from harness.known_divergences import UNEXPECTED
from harness.labels import DEFECT
from harness.outcome_labels import LABEL_COLUMNS, PROBLEMS_CHECK, row_label

__all__ = [
    "MISMATCH_KINDS",
    "ORACLE_ERRORS",
    "PARSER_ERRORS",
    "STREAM_CHECKS",
    "STRUCTURAL_CHECKS",
    "Status",
    "failing_mask",
    "plain_rows",
    "run_labels",
    "status_column",
    "stream_faults",
    "structural_break_mask",
]

PLAIN_BATCH = 65_536


class Status(str, Enum):
    """A row's standing in the reports: the three labels of a difference (a parser policy, a llama.cpp defect, a
    parser bug), agreement, or a side that could not answer."""

    MATCH = "match"
    POLICY = "policy"
    DEFECT = "llama.cpp defect"
    MISMATCH = "mismatch"
    UNEXPECTED_MATCH = "unexpected match"
    ORACLE_ERROR = "oracle error"
    PARSER_ERROR = "parser error"
    UNSUPPORTED = "unsupported"


MISMATCH_KINDS = tuple(kind.value for kind in Kind)
ORACLE_ERRORS = tuple(outcome.value for outcome in ORACLE_FAILURES)
PARSER_ERRORS = tuple(outcome.value for outcome in PARSER_FAILURES)
FAILING_STATUSES = (Status.MISMATCH.value, Status.PARSER_ERROR.value, Status.ORACLE_ERROR.value)


def status_of(outcome: str, explained: str) -> Status:
    """The status of a row's stored outcome and the label the sweep gave its difference."""
    if outcome == Outcome.MATCH.value:
        return Status.UNEXPECTED_MATCH if explained.startswith(UNEXPECTED) else Status.MATCH
    if outcome == Outcome.MISMATCH.value:
        if explained.startswith(DEFECT):
            return Status.DEFECT
        return Status.POLICY if explained else Status.MISMATCH
    if outcome in ORACLE_ERRORS:
        return Status.ORACLE_ERROR
    if outcome in PARSER_ERRORS:
        return Status.PARSER_ERROR
    if outcome in (Outcome.UNSUPPORTED.value, Outcome.NOT_WRITTEN.value):
        return Status.UNSUPPORTED
    raise ValueError(f"unknown row outcome {outcome!r}")


def status_column(rows: pd.DataFrame) -> pd.Series:
    """Each row's status, found once per distinct (outcome, explained)."""
    explained = rows["explained"].fillna("") if "explained" in rows.columns else pd.Series("", index=rows.index)
    pairs = pd.MultiIndex.from_arrays([rows["outcome"].astype(str), explained.astype(str)])
    codes, distinct = pd.factorize(pairs)
    values = np.array([status_of(outcome, text).value for outcome, text in distinct], dtype=object)
    return pd.Series(values[codes], index=rows.index, dtype="str")


def structural_break_mask(rows: pd.DataFrame) -> pd.Series:
    """Per row, whether its parser reading breaks a structural check that llama.cpp's reading holds (a reading a
    policy predicts, only problems_agree: `harness.outcome_labels.structural_breaks`)."""
    broken = pd.Series(False, index=rows.index, dtype=bool)
    by_policy = rows["status"].eq(Status.POLICY.value) if "status" in rows.columns else False
    for check in STRUCTURAL_CHECKS:
        if check not in rows.columns:
            continue
        oracle = f"oracle_{check}"
        holds = rows[oracle].ne(0) if oracle in rows.columns else True
        judged = True if check == PROBLEMS_CHECK else ~by_policy
        broken |= rows[check].eq(0) & holds & judged
    return broken


def stream_faults(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """Per stream check, the rows that break it by the parser's fault (as `harness.outcome_labels.broken_checks`
    counts them): consistent and monotonic where the row departs from llama.cpp's, clean and snapshot parity
    wherever they break."""
    departs = (
        (rows["outcome"] != Outcome.MATCH.value)
        | rows["parity_breaks"].fillna(0).gt(0)
        | rows["parity_explained"].fillna("").ne("")
    )
    return {
        check: rows[check].eq(0) & (departs if check in ("consistent", "monotonic") else True)
        for check in STREAM_CHECKS
    }


def failing_mask(rows: pd.DataFrame) -> pd.Series:
    """Per row (with a `status`), whether its label is a failure of the parser's: a mismatch no expectation
    accounts for, an error, a check it breaks by its own fault."""
    failing = rows["status"].isin(FAILING_STATUSES) | structural_break_mask(rows)
    for broken in stream_faults(rows).values():
        failing |= broken
    return failing


def plain_rows(rows: pd.DataFrame, names: Iterable[str]) -> Iterator[Any]:
    """The rows as `rows.itertuples()` gives them, with only the columns `names` the frame has, read a batch
    at a time as plain Python values (pandas reads a string column one element at a time otherwise)."""
    present = [name for name in dict.fromkeys(names) if name in rows.columns]
    record = namedtuple("record", present)  # type: ignore[misc]
    for start in range(0, len(rows), PLAIN_BATCH):
        batch = rows.iloc[start:start + PLAIN_BATCH]
        yield from map(record._make, zip(*(batch[name].tolist() for name in present)))


def run_labels(rows: pd.DataFrame) -> list[str]:
    """The label of every row of a run (`harness.outcome_labels.row_label`)."""
    return [row_label(row) for row in plain_rows(rows, LABEL_COLUMNS)]
