"""Failure groups: rows that fail the same way folded into one representative row with a count."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from reports.runs import chunking_key
from reports.statuses import STREAM_CHECKS, STRUCTURAL_CHECKS, Status, structural_break_mask

GROUP_KEYS = ("family", "syntax", "shapes", "status", "kind", "what")
GROUPED_STATUSES = (Status.MISMATCH, Status.POLICY, Status.DEFECT, Status.PARSER_ERROR, Status.ORACLE_ERROR)
ACCOUNTED_STATUSES = (Status.POLICY.value, Status.DEFECT.value)
INDEX = re.compile(r"\[\d+\]")
DISTINCT_HINT = 1_024
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


def distinct_codes(values: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's number among the distinct values, and those values (a missing value is one of them), found
    with a hash table grown as distinct values come rather than one sized for every value."""
    return pd.factorize(np.asarray(values), use_na_sentinel=False, size_hint=DISTINCT_HINT)


def per_distinct(values: pd.Series, function: Callable[[Any], Any]) -> np.ndarray:
    """`function` of each value, computed and held once per distinct value."""
    codes, distinct = distinct_codes(values)
    return pd.Series([function(value) for value in distinct]).to_numpy()[codes]


def combinations(rows: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's number among the distinct combinations of its values in `columns` (a missing value counts as
    one), and the first row of each combination in that numbering; numbered a column at a time."""
    codes = np.zeros(len(rows), dtype=np.int64)
    for column in columns:
        values, distinct = distinct_codes(rows[column])
        codes *= len(distinct)
        codes += values
        codes, _ = distinct_codes(codes)
    _, first = np.unique(codes, return_index=True)
    return codes, rows.iloc[first]


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

    Rows group on their shape kind (numbers blanked); the representative keeps its own shape. The representative
    is the group's first row in that order (its first value, column by column, where a value is missing).
    """
    keys = [*by, *keys]
    failing = failing.assign(shapes=per_distinct(failing["shape"], shape_kind))
    codes, groups = combinations(failing, keys)
    representatives_first = (
        pd.DataFrame(
            {
                "_length": per_distinct(failing["reply"], len),
                "_chunk": per_distinct(failing["chunking"], chunking_key),
                "case_id": failing["case_id"].to_numpy(),
            }
        )
        .sort_values(["_length", "_chunk", "case_id"], kind="stable")
        .index.to_numpy()
    )
    table = groups[keys].reset_index(drop=True)
    table["rows"] = np.bincount(codes, minlength=len(groups))
    table["templates"] = failing["template"].groupby(codes).nunique().to_numpy()
    table["cases"] = failing["case_id"].groupby(codes).nunique().to_numpy()
    for column in [column for column in columns if column not in table.columns]:
        ordered = failing[column].take(representatives_first)
        table[column] = ordered.groupby(codes[representatives_first]).first().reset_index(drop=True)
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
    breaks = pd.Series(False, index=rows.index)
    for check in STREAM_CHECKS:
        breaks |= rows[check] == 0
    broken = rows.loc[streamed & breaks, source_columns(rows, columns)]
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
        **{"llama.cpp too": structural_break_mask(broken).map({True: "no", False: "yes"})},
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
    read = source_columns(rows, [*columns, *by, "outcome", "explained"])
    failing = rows.loc[rows["status"].isin([status.value for status in statuses]), read]
    if failing.empty:
        return pd.DataFrame(columns=columns)
    failing = failing.assign(
        what=[
            explained if status in ACCOUNTED_STATUSES
            else detail_path(detail) if outcome == "mismatch" else error_head(error) or outcome
            for status, explained, outcome, detail, error in zip(
                failing["status"].tolist(), failing["explained"].tolist(), failing["outcome"].tolist(),
                failing["detail"].tolist(), failing["error"].tolist()
            )
        ]
    )
    return _fold(failing, list(GROUP_KEYS), columns, by)
