"""Failure groups: rows that fail the same way folded into one representative row with a count."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from reports.runs import chunking_key
from reports.statuses import STREAM_CHECKS, STRUCTURAL_CHECKS, Status, structural_breaks

GROUP_KEYS = ("family", "syntax", "shapes", "status", "kind", "what")
GROUPED_STATUSES = (Status.MISMATCH, Status.KNOWN, Status.PARSER_ERROR, Status.ORACLE_ERROR)
INDEX = re.compile(r"\[\d+\]")
FOLD_COLUMNS = ("case_id", "chunking", "reply", "shape", "template")
"""The columns `_fold` groups, sorts and counts on, besides those a grouping shows."""


def detail_path(detail: str) -> str:
    """The field path of a mismatch detail ('tool_calls[1].arguments.x @3: …' -> 'tool_calls[].arguments.x').

    A rejection keeps its reason with quoted text and numbers blanked ('rejected: expected 'N'…').
    """
    head, _, rest = detail.partition(":")
    if head in {"rejected", "oracle rejected"}:
        return f"{head}: {error_head(rest)[:80]}"
    path = re.split(r" @|:", detail, maxsplit=1)[0].strip()
    return INDEX.sub("[]", path)


def error_head(error: str) -> str:
    """The first line of an error message with numbers and quoted text blanked, so like errors group."""
    line = error.strip().splitlines()[0] if error.strip() else ""
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", line)
    return re.sub(r"\d+", "N", line)[:120]


def per_distinct(values: Iterable[Any], function: Callable[[Any], Any]) -> list[Any]:
    """`function` of each value, computed and held once per distinct value."""
    memo: dict[Any, Any] = {}
    return [memo[value] if value in memo else memo.setdefault(value, function(value)) for value in values]


def blanked_numbers(detail: str) -> str:
    """A check's detail with numbers blanked and cut to 120 characters, so like breaks group."""
    return re.sub(r"\d+", "N", detail)[:120]


def shape_kind(shape: str) -> str:
    """A reply shape with numbers blanked, so seeded variants of a shape (fuzz:seed=N:N) group together."""
    return re.sub(r"\d+", "N", shape)


def _fold(failing: pd.DataFrame, keys: list[str], columns: list[str], by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Group failing rows by `keys`: counts, spans, a representative (shortest reply, 'whole' first, case id),
    most rows first; with `by`, within each value of those columns (sorted by them first), as if each part
    were folded on its own.

    Rows group on their shape kind (numbers blanked); the representative keeps its own shape.
    """
    keys = [*by, *keys]
    failing = failing.assign(
        _chunk=per_distinct(failing["chunking"], chunking_key),
        _length=per_distinct(failing["reply"], len),
        shapes=per_distinct(failing["shape"], shape_kind),
    )
    failing = failing.sort_values(["_length", "_chunk", "case_id"], kind="stable")
    grouped = failing.groupby(keys, sort=False, dropna=False)
    summary = grouped.agg(
        rows=("case_id", "size"), templates=("template", "nunique"), cases=("case_id", "nunique")
    )
    shown = [column for column in columns if column not in keys and column not in summary.columns]
    table = summary.join(grouped[shown].first()).reset_index()
    order = [*by, "rows", *keys[len(by):]]
    table = table.sort_values(order, ascending=[column != "rows" for column in order], kind="stable")
    return table[columns].reset_index(drop=True)


def source_columns(rows: pd.DataFrame, shown: list[str]) -> list[str]:
    """The columns of `rows` a grouping of failing rows reads: those it shows and those `_fold` sorts on."""
    return [name for name in rows.columns if name in shown or name in FOLD_COLUMNS]


def stream_groups(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per way a stream check breaks (family, syntax, shape, first broken invariant), most first."""
    columns = [
        "family",
        "syntax",
        "shapes",
        "what",
        "rows",
        "templates",
        "cases",
        "template",
        "mode",
        "chunking",
        "shape",
        "case_id",
        "stream_detail",
        "reply",
    ]
    streamed = (rows["chunking"] != "whole") & rows["consistent"].notna()
    broken = rows.loc[streamed & (rows[list(STREAM_CHECKS)] == 0).any(axis=1), source_columns(rows, columns)]
    if broken.empty:
        return pd.DataFrame(columns=columns)
    broken = broken.assign(what=per_distinct(broken["stream_detail"], blanked_numbers))
    return _fold(broken, ["family", "syntax", "shapes", "what"], columns)


def structure_groups(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per way the parser's finished reading breaks a structural check (family, syntax, shape, what
    broke, and whether llama.cpp's reading breaks it too, which makes it llama.cpp's defect), most first."""
    columns = [
        "family",
        "syntax",
        "shapes",
        "what",
        "llama.cpp too",
        "rows",
        "templates",
        "cases",
        "template",
        "mode",
        "chunking",
        "shape",
        "case_id",
        "structure_detail",
        "reply",
    ]
    broken = rows[(rows[list(STRUCTURAL_CHECKS)] == 0).any(axis=1)]
    if broken.empty:
        return pd.DataFrame(columns=columns)
    broken = broken.assign(
        what=per_distinct(broken["structure_detail"], blanked_numbers),
        **{"llama.cpp too": ["no" if structural_breaks(row) else "yes" for row in broken.itertuples()]},
    )
    return _fold(broken, ["family", "syntax", "shapes", "what", "llama.cpp too"], columns)


def failure_groups(
    rows: pd.DataFrame, statuses: tuple[Status, ...] = GROUPED_STATUSES, by: tuple[str, ...] = ()
) -> pd.DataFrame:
    """One line per way of failing (family, syntax, shape, status, kind, field path or error), most first
    (with `by`, within each value of those columns, e.g. per template and chunking).

    Each line carries the count, how many templates and cases it spans, and a representative row (the shortest
    reply, 'whole' chunking preferred, then by case id) with its template, mode, chunking, detail, readings.
    """
    failing = rows[rows["status"].isin([status.value for status in statuses])].copy()
    columns = [
        *GROUP_KEYS,
        "rows",
        "templates",
        "cases",
        "template",
        "mode",
        "chunking",
        "shape",
        "case_id",
        "detail",
        "reply",
        "oracle_reading",
        "parser_reading",
        "error",
    ]
    if failing.empty:
        return pd.DataFrame(columns=columns)
    failing["what"] = [
        detail_path(detail) if outcome == "mismatch" else error_head(error) or outcome
        for outcome, detail, error in zip(failing["outcome"], failing["detail"], failing["error"])
    ]
    return _fold(failing, list(GROUP_KEYS), columns, by)
