"""How a report counts a row: the raw outcome (chatparity.model) with known divergences applied."""

from __future__ import annotations

import hashlib
from collections import namedtuple
from collections.abc import Iterable, Iterator
from enum import Enum
from typing import Any

import pandas as pd

from chatparity.model import ORACLE_FAILURES, PARSER_FAILURES, STREAM_CHECKS, STRUCTURAL_CHECKS, Kind, Outcome

__all__ = [
    "MISMATCH_KINDS",
    "ORACLE_ERRORS",
    "PARSER_ERRORS",
    "STREAM_CHECKS",
    "STRUCTURAL_CHECKS",
    "Status",
    "label_reading",
    "outcome_label",
    "reading_digest",
    "raw_status",
    "plain_rows",
    "structural_break_mask",
    "structural_breaks",
]

PLAIN_BATCH = 65_536


class Status(str, Enum):
    """A row's standing in the reports."""

    MATCH = "match"
    MISMATCH = "mismatch"
    KNOWN = "known divergence"
    UNEXPECTED_MATCH = "unexpected match"
    ORACLE_ERROR = "oracle error"
    PARSER_ERROR = "parser error"
    UNSUPPORTED = "unsupported"


MISMATCH_KINDS = tuple(kind.value for kind in Kind)
ORACLE_ERRORS = tuple(outcome.value for outcome in ORACLE_FAILURES)
PARSER_ERRORS = tuple(outcome.value for outcome in PARSER_FAILURES)


def raw_status(outcome: str) -> Status:
    """The status of a raw outcome before known divergences are applied."""
    if outcome == Outcome.MATCH.value:
        return Status.MATCH
    if outcome == Outcome.MISMATCH.value:
        return Status.MISMATCH
    if outcome in ORACLE_ERRORS:
        return Status.ORACLE_ERROR
    if outcome in PARSER_ERRORS:
        return Status.PARSER_ERROR
    if outcome == Outcome.UNSUPPORTED.value:
        return Status.UNSUPPORTED
    raise ValueError(f"unknown row outcome {outcome!r}")


def outcome_label(outcome: str, kind: str) -> str:
    """The outcome with its mismatch kind, e.g. 'mismatch:calls', the form baselines and diffs compare."""
    return f"{outcome}:{kind}" if outcome == Outcome.MISMATCH.value and kind else outcome


READING_MARK = " @"


def reading_digest(reading: str) -> str:
    """A short digest of a reading's JSON text, as a label pins a mismatching reading."""
    return hashlib.sha256(reading.encode("utf-8")).hexdigest()[:10]


def label_outcome(label: str) -> str:
    """A label's outcome without its reading's digest and the checks it breaks: 'match !clean=2' -> 'match',
    'mismatch:calls @0a1b2c3d4e' -> 'mismatch:calls'."""
    return label.partition(" !")[0].partition(READING_MARK)[0]


def label_reading(label: str) -> str:
    """The digest of the parser's reading a mismatch label pins ('' when it pins none)."""
    return label.partition(" !")[0].partition(READING_MARK)[2]


def structural_breaks(row: Any) -> list[str]:
    """The structural checks a row's parser reading breaks where llama.cpp's reading of it does not: those count
    against the parser (where both break one, it is llama.cpp's defect, listed in oracle_defects.md)."""
    return [
        check
        for check in STRUCTURAL_CHECKS
        if getattr(row, check, None) == 0 and getattr(row, f"oracle_{check}", None) != 0
    ]


def structural_break_mask(rows: pd.DataFrame) -> pd.Series:
    """Per row, whether `structural_breaks` finds a check its parser reading breaks where llama.cpp's holds."""
    broken = pd.Series(False, index=rows.index, dtype=bool)
    for check in STRUCTURAL_CHECKS:
        if check not in rows.columns:
            continue
        oracle = f"oracle_{check}"
        holds = rows[oracle].ne(0) if oracle in rows.columns else True
        broken |= rows[check].eq(0) & holds
    return broken


def plain_rows(rows: pd.DataFrame, names: Iterable[str]) -> Iterator[Any]:
    """The rows as `rows.itertuples()` gives them, with only the columns `names` the frame has, read a batch
    at a time as plain Python values (pandas reads a string column one element at a time otherwise)."""
    present = [name for name in dict.fromkeys(names) if name in rows.columns]
    record = namedtuple("record", present)  # type: ignore[misc]
    for start in range(0, len(rows), PLAIN_BATCH):
        batch = rows.iloc[start:start + PLAIN_BATCH]
        yield from map(record._make, zip(*(batch[name].tolist() for name in present)))
