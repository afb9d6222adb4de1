"""How a report counts a row: the raw outcome with known divergences applied."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """A row's standing in the reports."""

    MATCH = "match"
    MISMATCH = "mismatch"
    KNOWN = "known divergence"
    UNEXPECTED_MATCH = "unexpected match"
    ORACLE_ERROR = "oracle error"
    PARSER_ERROR = "parser error"
    UNSUPPORTED = "unsupported"


MISMATCH_KINDS = ("content", "reasoning", "calls", "rejects", "accepts")
ORACLE_ERRORS = ("oracle_crashed", "oracle_timeout")
PARSER_ERRORS = ("parser_crashed", "parser_timeout")
STREAM_CHECKS = ("consistent", "monotonic", "clean", "snapshot_parity")


def raw_status(outcome: str) -> Status:
    """The status of a raw outcome before known divergences are applied."""
    if outcome == "match":
        return Status.MATCH
    if outcome == "mismatch":
        return Status.MISMATCH
    if outcome in ORACLE_ERRORS:
        return Status.ORACLE_ERROR
    if outcome in PARSER_ERRORS:
        return Status.PARSER_ERROR
    if outcome == "unsupported":
        return Status.UNSUPPORTED
    raise ValueError(f"unknown row outcome {outcome!r}")


def outcome_label(outcome: str, kind: str) -> str:
    """The outcome with its mismatch kind, e.g. 'mismatch:calls', the form baselines and diffs compare."""
    return f"{outcome}:{kind}" if outcome == "mismatch" and kind else outcome
