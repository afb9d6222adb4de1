"""Outcomes of a row and kinds of mismatch."""

from __future__ import annotations

from enum import Enum


class Outcome(str, Enum):
    """What became of one row: agreement, disagreement, or a side that could not answer."""

    MATCH = "match"
    MISMATCH = "mismatch"
    ORACLE_CRASHED = "oracle_crashed"
    ORACLE_TIMEOUT = "oracle_timeout"
    PARSER_CRASHED = "parser_crashed"
    PARSER_TIMEOUT = "parser_timeout"
    UNSUPPORTED = "unsupported"


class Kind(str, Enum):
    """How two readings differ: a field, or one side rejecting what the other reads."""

    CONTENT = "content"
    REASONING = "reasoning"
    CALLS = "calls"
    REJECTS = "rejects"
    ACCEPTS = "accepts"


class SessionStatus(str, Enum):
    """Whether a session produced rows, and why not."""

    OK = "ok"
    UNSUPPORTED = "unsupported"
    ORACLE_ERROR = "oracle_error"
    JINJA2_ERROR = "jinja2_error"
