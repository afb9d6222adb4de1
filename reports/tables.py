"""Per family, syntax and template tables of a run: match rates per chunking, outcomes, stream and structural
checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from harness.labels import counts_of, is_defect
from reports.groups import combinations
from reports.runs import ordered_chunkings
from reports.statuses import (
    MISMATCH_KINDS,
    ORACLE_ERRORS,
    PARSER_ERRORS,
    STREAM_CHECKS,
    STRUCTURAL_CHECKS,
    Status,
    stream_faults,
)

GROUPINGS = ("family", "syntax", "template")
ALL = "(all)"
FLAG = "int8"
TABLE_PIECE_ROWS = 2_000
SIDES = {"parser": "", "llama.cpp": "oracle_"}
STRUCTURE_COLUMNS = tuple(
    f"{prefix}{check}{suffix}" for prefix in SIDES.values() for check in STRUCTURAL_CHECKS for suffix in ("_judged", "")
)
STATUS_COLUMNS = {
    Status.MATCH: "match",
    Status.POLICY: "policy",
    Status.DEFECT: "llama.cpp_defect",
    Status.MISMATCH: "bug",
    Status.UNEXPECTED_MATCH: "unexpected_match",
    Status.UNSUPPORTED: "unsupported",
}
COUNTED = (
    *GROUPINGS,
    "chunking",
    "partial",
    "status",
    "kind",
    "outcome",
    "parity_breaks",
    "parity_explained",
    *STREAM_CHECKS,
    *(f"{prefix}{check}" for prefix in SIDES.values() for check in STRUCTURAL_CHECKS),
)
"""The columns a row's counts depend on: rows alike in all of them count alike."""
SNAPSHOT_COLUMNS = ("snapshots_policy", "snapshots_llama.cpp_defect", "snapshots_bug")
SNAPSHOT_TITLES = ("snapshots: policy", "snapshots: llama.cpp defect", "snapshots: parser bug")
COUNT_COLUMNS = (
    "rows",
    "read",
    *STATUS_COLUMNS.values(),
    *MISMATCH_KINDS,
    *ORACLE_ERRORS,
    *PARSER_ERRORS,
    "streamed",
    "streams_failing",
    *STREAM_CHECKS,
    *SNAPSHOT_COLUMNS,
    *STRUCTURE_COLUMNS,
)


@dataclass(frozen=True)
class Tables:
    """Long-form counts per grouping (for machines) and the tables shown to people, per grouping."""

    counts: dict[str, pd.DataFrame]
    shown: dict[str, dict[str, pd.DataFrame]]


def snapshot_counts(explained: pd.Series, breaks: pd.Series) -> pd.DataFrame:
    """Per row, how many of its streams' snapshots differ from llama-server's as a policy says, as a llama.cpp
    defect makes them, and as neither (a parser bug)."""
    policy, defect = [], []
    for text in explained.fillna("").tolist():
        counts = counts_of(str(text))
        defect.append(sum(count for label, count in counts.items() if is_defect(label)))
        policy.append(sum(counts.values()) - defect[-1])
    return pd.DataFrame(
        {"snapshots_policy": policy, "snapshots_llama.cpp_defect": defect,
         "snapshots_bug": breaks.fillna(0).astype("int64").tolist()},
        index=explained.index, dtype="int64",
    )


def indicators(rows: pd.DataFrame) -> pd.DataFrame:
    """One column per counted property of a row (statuses, unexplained mismatch kinds, errors, checks as 0/1
    FLAG; its snapshots by label as counts)."""
    flags = pd.DataFrame(index=rows.index)
    flags["rows"] = pd.Series(1, index=rows.index, dtype=FLAG)
    flags["read"] = (rows["status"] != Status.UNSUPPORTED.value).astype(FLAG)
    for status, column in STATUS_COLUMNS.items():
        flags[column] = (rows["status"] == status.value).astype(FLAG)
    for kind in MISMATCH_KINDS:
        flags[kind] = ((rows["status"] == Status.MISMATCH.value) & (rows["kind"] == kind)).astype(FLAG)
    for outcome in (*ORACLE_ERRORS, *PARSER_ERRORS):
        flags[outcome] = (rows["outcome"] == outcome).astype(FLAG)
    streamed = (rows["chunking"] != "whole") & rows["consistent"].notna()
    flags["streamed"] = streamed.astype(FLAG)
    faults = stream_faults(rows)
    failing = pd.Series(False, index=rows.index)
    for check in STREAM_CHECKS:
        flags[check] = (streamed & ~faults[check]).astype(FLAG)
        failing |= faults[check]
    flags["streams_failing"] = (streamed & failing).astype(FLAG)
    flags = pd.concat([flags, snapshot_counts(rows["parity_explained"], rows["parity_breaks"])], axis=1)
    for prefix in SIDES.values():
        for check in STRUCTURAL_CHECKS:
            flags[f"{prefix}{check}_judged"] = rows[f"{prefix}{check}"].notna().astype(FLAG)
            flags[f"{prefix}{check}"] = (rows[f"{prefix}{check}"] == 1).astype(FLAG)
    return flags


def count_rows(rows: pd.DataFrame, flags: pd.DataFrame, by: str) -> pd.DataFrame:
    """The sums of the rows' `flags` per (group, chunking, finished/partial), sorted, as plain integers."""
    reply = rows["partial"].map({0: "finished", 1: "partial"}).rename("reply")
    counts = flags.groupby([rows[by], rows["chunking"], reply], sort=True).sum().reset_index()
    order = {chunking: index for index, chunking in enumerate(ordered_chunkings(counts["chunking"]))}
    counts = counts.assign(_order=counts["chunking"].map(order))
    counts = counts.sort_values([by, "_order", "reply"], kind="stable").drop(columns="_order")
    return counts[[by, "chunking", "reply", *COUNT_COLUMNS]].reset_index(drop=True)


def rate(part: int, total: int) -> str:
    """'part/total (pct%)', or '–' when there is nothing to count."""
    return f"{part}/{total} ({100 * part / total:.1f}%)" if total else "–"


def ratio(part: int, total: int) -> str:
    """'part/total', or '–' when there is nothing to count."""
    return f"{part}/{total}" if total else "–"


def _with_total(sums: pd.DataFrame, by: str) -> pd.DataFrame:
    """A per-group sum frame with an '(all)' line appended."""
    total = sums.sum(numeric_only=True).to_frame().T
    total.insert(0, by, ALL)
    return pd.concat([sums, total], ignore_index=True)


def match_table(counts: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group: rows the parser reads, overall match rate, and match/read per chunking, finished and partial
    apart (rows of sessions the parser declines are in no rate)."""

    def sums(cell: pd.DataFrame) -> pd.DataFrame:
        """Match and read-row sums per group of some counts, with the '(all)' line."""
        return _with_total(cell.groupby(by, sort=True)[["match", "read"]].sum().reset_index(), by).set_index(
            by
        )

    overall = sums(counts)
    table = pd.DataFrame(
        {
            "rows read": overall["read"].astype(int),
            "match": [rate(int(m), int(t)) for m, t in zip(overall["match"], overall["read"])],
        },
        index=overall.index,
    )
    replies = [reply for reply in ("finished", "partial") if reply in set(counts["reply"])]
    for chunking in ordered_chunkings(counts["chunking"]):
        for reply in replies:
            cell = sums(counts[(counts["chunking"] == chunking) & (counts["reply"] == reply)])
            label = chunking if reply == "finished" else f"{chunking} partial"
            table[label] = [
                rate(int(cell.at[group, "match"]), int(cell.at[group, "read"]))
                if group in cell.index
                else "–"
                for group in table.index
            ]
    return table.reset_index()


def outcome_table(counts: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group: the rows the parser reads by label (match, parser policy, llama.cpp defect, parser bug by
    kind), unexpected matches, oracle and parser errors, and the rows of declined sessions apart."""
    columns = ["read", *STATUS_COLUMNS.values(), *MISMATCH_KINDS, *ORACLE_ERRORS, *PARSER_ERRORS]
    sums = _with_total(counts.groupby(by, sort=True)[columns].sum().reset_index(), by)
    table = pd.DataFrame({by: sums[by]})
    for column in ["read", "match", "policy", "llama.cpp_defect", "bug", *MISMATCH_KINDS, "unexpected_match"]:
        table[("rows read" if column == "read" else column).replace("_", " ")] = sums[column].astype(int)
    table["oracle errors"] = sums[list(ORACLE_ERRORS)].sum(axis=1).astype(int)
    table["parser errors"] = sums[list(PARSER_ERRORS)].sum(axis=1).astype(int)
    table["unsupported"] = sums["unsupported"].astype(int)
    return table


def stream_table(counts: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group: streamed rows, how many fail a check by the parser's fault, how many pass each check, and
    their snapshots that differ from llama-server's by label."""
    columns = ["streamed", "streams_failing", *STREAM_CHECKS, *SNAPSHOT_COLUMNS]
    sums = _with_total(counts.groupby(by, sort=True)[columns].sum().reset_index(), by)
    table = pd.DataFrame({by: sums[by], "streamed": sums["streamed"].astype(int),
                          "failing": sums["streams_failing"].astype(int)})
    for check in STREAM_CHECKS:
        table[check.replace("_", " ")] = [
            ratio(int(p), int(s)) for p, s in zip(sums[check], sums["streamed"])
        ]
    for column, title in zip(SNAPSHOT_COLUMNS, SNAPSHOT_TITLES):
        table[title] = sums[column].astype(int)
    return table


def structure_table(counts: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group: for the parser's and llama.cpp's finished readings, how many hold each structural check of
    those it judges."""
    sums = _with_total(counts.groupby(by, sort=True)[list(STRUCTURE_COLUMNS)].sum().reset_index(), by)
    table = pd.DataFrame({by: sums[by]})
    for side, prefix in SIDES.items():
        for check in STRUCTURAL_CHECKS:
            held, judged = sums[f"{prefix}{check}"], sums[f"{prefix}{check}_judged"]
            table[f"{side} {check.replace('_', ' ')}"] = [ratio(int(h), int(j)) for h, j in zip(held, judged)]
    return table


def build_tables(rows: pd.DataFrame) -> Tables:
    """All tables of a run's classified rows (rows with a `status` column), counted once per distinct
    combination of the columns counts depend on."""
    codes, distinct = combinations(rows, list(COUNTED))
    flags = indicators(distinct).mul(np.bincount(codes, minlength=len(distinct)), axis=0)
    counts = {by: count_rows(distinct, flags, by) for by in GROUPINGS}
    shown = {
        by: {
            "match": match_table(counts[by], by),
            "outcomes": outcome_table(counts[by], by),
            "stream": stream_table(counts[by], by),
            "structure": structure_table(counts[by], by),
        }
        for by in GROUPINGS
    }
    return Tables(counts=counts, shown=shown)


def markdown_cell(value: object, width: int | None = None) -> str:
    """A value made safe for one markdown table cell, cut to `width` characters with '…' when given."""
    text = str(value)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", "⏎")


def github_table(cells: list[list[str]], headers: list[str]) -> str:
    """tabulate's GitHub table of cells, every one taken as text."""
    return tabulate(cells, headers=headers, tablefmt="github", disable_numparse=True)


def column_width(header: str, cells: list[str]) -> int:
    """The width tabulate gives a GitHub table's column of `cells` under `header` (the widest cell's: the same
    for the column's distinct cells as for all of them)."""
    separator = github_table([[cell] for cell in dict.fromkeys(cells)], [header]).split("\n")[1]
    return len(separator) - len("|--|")


def markdown_pieces(frame: pd.DataFrame, width: int | None = None,
                    piece_rows: int = TABLE_PIECE_ROWS) -> Iterator[str]:
    """A GitHub markdown table of a frame (cells cut to `width`), or '_none_' when it is empty, made
    `piece_rows` rows at a time: the headers of a table in several pieces are padded to its columns' widths
    over the whole, so tabulate lays every piece out as it lays out the whole."""
    if frame.empty:
        yield "_none_"
        return
    headers = [markdown_cell(column) for column in frame.columns]
    columns = [
        [markdown_cell(value, width) for value in frame.iloc[:, at].tolist()] for at in range(len(headers))
    ]
    cells = [list(row) for row in zip(*columns)]
    if len(cells) <= piece_rows:
        yield github_table(cells, headers)
        return
    padded = [
        header + " " * (column_width(header, column) - column_width(header, []))
        for header, column in zip(headers, columns)
    ]
    for start in range(0, len(cells), piece_rows):
        table = github_table(cells[start:start + piece_rows], padded)
        yield table if start == 0 else table.split("\n", 2)[2]


def markdown_table(frame: pd.DataFrame, width: int | None = None) -> str:
    """markdown_pieces' table as one text."""
    return "\n".join(markdown_pieces(frame, width))


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON-ready records (NaN as null, numpy numbers as plain numbers)."""
    return json.loads(frame.to_json(orient="records", force_ascii=False))
