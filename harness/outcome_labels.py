"""A row's label, as baselines, diffs and the sweep's progress compare it: its outcome as the parser's expectations
account for it, and the checks it breaks that are the parser's fault.

    match                                   the readings agree
    policy:NAME[+NAME]                      they differ only as the parser's policies (or a known divergence) say
    llama.cpp:DEFECT                        they differ where llama.cpp's own reading is wrong
    mismatch:KIND @DIGEST                   a parser bug: the readings differ otherwise (DIGEST pins the reading)
    parser_crashed, oracle_timeout, …       a side could not answer
    … !CHECK[=N],CHECK                      the stream and structural checks it breaks (N: how many snapshots)
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from chatparity.model import ORACLE_FAILURES, PARSER_FAILURES, STRUCTURAL_CHECKS, Outcome
from harness.known_divergences import UNEXPECTED
from harness.labels import DEFECT

POLICY = "policy:"
PROBLEMS_CHECK = "problems_agree"
READING_MARK = " @"
CHECKS_MARK = " !"
COUNTED_CHECKS = {"clean": "clean_breaks", "snapshot_parity": "parity_breaks"}
OWN_STREAM_CHECKS = ("consistent", "monotonic")
FAILING_OUTCOMES = frozenset(
    [Outcome.MISMATCH.value, *(outcome.value for outcome in (*PARSER_FAILURES, *ORACLE_FAILURES))]
)
LABEL_COLUMNS = (
    "outcome",
    "kind",
    "explained",
    "parser_reading",
    "consistent",
    "monotonic",
    "clean",
    "snapshot_parity",
    "clean_breaks",
    "parity_breaks",
    "parity_explained",
    *STRUCTURAL_CHECKS,
    *(f"oracle_{check}" for check in STRUCTURAL_CHECKS),
)
"""The row columns a label is made of."""


def reading_digest(reading: str) -> str:
    """A short digest of a reading's JSON text, as a label pins a mismatching reading (a lone surrogate taken as
    the escape the store keeps it as, so a worker's label and the stored row's agree)."""
    return hashlib.sha256(reading.encode("utf-8", "backslashreplace")).hexdigest()[:10]


def known(value: Any) -> bool:
    """Whether a column's value is set (not None or NaN)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def departs(row: Any) -> bool:
    """Whether the parser's reading or stream departs from llama.cpp's somewhere (explained or not)."""
    return row.outcome != Outcome.MATCH.value or bool(row.parity_breaks) or bool(row.parity_explained)


def by_policy(row: Any) -> bool:
    """Whether the row's readings differ exactly as the parser's policies (or a known divergence) say."""
    explained = str(row.explained or "")
    return (row.outcome == Outcome.MISMATCH.value and bool(explained)
            and not explained.startswith((DEFECT, UNEXPECTED)))


def structural_breaks(row: Any) -> list[str]:
    """The structural checks the parser's reading breaks where llama.cpp's reading holds them (where both break
    one, it is llama.cpp's defect); a reading a policy predicts breaks only problems_agree (its shape is the
    policy's, documented: a call kept with the arguments it showed may lack a required one)."""
    checks = (PROBLEMS_CHECK,) if by_policy(row) else STRUCTURAL_CHECKS
    return [
        check for check in checks
        if getattr(row, check, None) == 0 and getattr(row, f"oracle_{check}", None) != 0
    ]


def broken_checks(row: Any) -> list[str]:
    """The checks a row breaks that are the parser's fault, counted ones with their snapshots: its own stream's
    consistency and monotonicity where it departs from llama.cpp's (a stream that is llama.cpp's own everywhere
    inherits llama.cpp's faults), a marker it shows that its end lacks, the snapshots no policy or llama.cpp defect
    explains, and the structural checks its reading breaks where llama.cpp's holds."""
    found = [check for check in OWN_STREAM_CHECKS if getattr(row, check) == 0] if departs(row) else []
    for check, column in COUNTED_CHECKS.items():
        if getattr(row, check) == 0:
            count = getattr(row, column, math.nan)
            found.append(f"{check}={int(count)}" if known(count) else check)
    return found + structural_breaks(row)


def outcome_label(row: Any) -> str:
    """A row's outcome as its expectations account for it: match, policy:NAMES, llama.cpp:DEFECT,
    mismatch:KIND @DIGEST, or the error."""
    if row.outcome != Outcome.MISMATCH.value:
        return str(row.outcome)
    explained = str(row.explained or "")
    if explained.startswith(DEFECT):
        return explained
    if explained and not explained.startswith(UNEXPECTED):
        return POLICY + explained
    label = f"{Outcome.MISMATCH.value}:{row.kind}" if row.kind else Outcome.MISMATCH.value
    return label + READING_MARK + reading_digest(str(row.parser_reading)) if row.parser_reading else label


def row_label(row: Any) -> str:
    """A row's whole label: its outcome, and after ' !' the checks it breaks."""
    broken = broken_checks(row)
    return outcome_label(row) + (CHECKS_MARK + ",".join(broken) if broken else "")


def label_outcome(label: str) -> str:
    """A label's outcome without its reading's digest and checks: 'mismatch:calls @0a1b2c3d4e !clean=2' ->
    'mismatch:calls'."""
    return label.partition(CHECKS_MARK)[0].partition(READING_MARK)[0]


def label_reading(label: str) -> str:
    """The digest of the parser's reading a mismatch label pins ('' when it pins none)."""
    return label.partition(CHECKS_MARK)[0].partition(READING_MARK)[2]


def label_checks(label: str) -> dict[str, int | None]:
    """The checks a label breaks, each with how many snapshots break it (None: not counted)."""
    broken = label.partition(CHECKS_MARK)[2]
    checks: dict[str, int | None] = {}
    for item in broken.split(",") if broken else []:
        check, _, count = item.partition("=")
        checks[check] = int(count) if count else None
    return checks


def failing_label(label: str) -> bool:
    """Whether a label is a failure of the parser's: a mismatch no expectation accounts for, an error, or a broken
    check."""
    return label_outcome(label).partition(":")[0] in FAILING_OUTCOMES or CHECKS_MARK in label
