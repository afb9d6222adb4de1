"""The peer matrix: for each parser (the peers, the project's `reply`, llama.cpp against itself) and each reply
syntax, how its rows agree with llama.cpp whole, token-streamed and character-streamed, each row labelled as the
harness labels it (match, parser policy, llama.cpp defect, parser bug); the templates each parser declines; and
each class of parser bug with a representative case."""

from __future__ import annotations

import fnmatch
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from chatparity.model import ORACLE_FAILURES, Kind, Outcome
from harness.labels import DEFECT
from harness.outcome_labels import (
    LABEL_COLUMNS,
    POLICY,
    failing_label,
    label_checks,
    label_outcome,
    row_label,
)
from harness.store import open_store, read_stamp

CLASSES = ("whole", "tokens", "chars")
CLASS_TITLES = {"whole": "whole", "tokens": "token-streamed", "chars": "char-streamed"}
VERDICTS = ("match", "policy", "defect", "bug")
VERDICT_TITLES = {"match": "match", "policy": "parser policy", "defect": "llama.cpp defect", "bug": "parser bug"}
TOKEN_CHUNKINGS = ("tokens", "special")
ROW_COLUMNS = ("case_id", "chunking", "session_id", "template", "syntax", "mode", "origin", "shape", "partial", "reply",
               "oracle_reading", "parser_reading", "error", "detail")
ACCEPTS = "bug_accepts"
"""Parser bugs where llama.cpp rejects the finished reply (a reply its grammar would not let a model write)."""
FINAL = "final_agrees"
"""Rows whose final reading matches llama.cpp's or differs only as a policy or a llama.cpp defect explains, whatever
their stream checks say."""
ORACLE_OUTCOMES = frozenset(outcome.value for outcome in ORACLE_FAILURES)


def chunking_class(chunking: str) -> str:
    """whole, tokens (a real server's chunks: `tokens`, `special`, `tokens:K:SEED`) or chars (the rest)."""
    if chunking == "whole":
        return "whole"
    return "tokens" if chunking.partition(":")[0] in TOKEN_CHUNKINGS else "chars"


def verdict(row: Any) -> str:
    """A row's verdict: declined, oracle_error, or one of VERDICTS from its label."""
    if row.outcome == Outcome.UNSUPPORTED.value:
        return "declined"
    if row.outcome in ORACLE_OUTCOMES:
        return "oracle_error"
    label = row_label(row)
    if failing_label(label):
        return "bug"
    if label.startswith(DEFECT):
        return "defect"
    return "policy" if label.startswith(POLICY) else "match"


def bug_signature(row: Any) -> str:
    """What one class of parser bug has in common: the syntax, the chunking class, whether the reply is cut, the
    outcome and the checks broken."""
    label = row_label(row)
    checks = ",".join(sorted(label_checks(label)))
    return " ".join(part for part in (row.syntax, chunking_class(row.chunking), "cut" if row.partial else "",
                                      label_outcome(label), f"!{checks}" if checks else "") if part)


def store_rows(run: Path, templates: str = "*") -> Iterator[Any]:
    """Every row of a run store whose template one of the comma-separated globs selects (as the sweep's
    --templates does), with the columns a label and a bug report need."""
    connection = open_store(run)
    connection.row_factory = sqlite3.Row
    names = ", ".join(dict.fromkeys((*ROW_COLUMNS, *LABEL_COLUMNS)))
    try:
        for found in connection.execute(f"SELECT {names} FROM rows ORDER BY case_id, chunking"):
            if any(fnmatch.fnmatchcase(found["template"], glob) for glob in templates.split(",")):
                yield SimpleNamespace(**dict(found))
    finally:
        connection.close()


def revision(run: Path) -> str:
    """The parser revision a run's stamp records."""
    connection = open_store(run)
    try:
        return str(read_stamp(connection).get("parser_revision", ""))
    finally:
        connection.close()


@dataclass
class Bug:
    """One class of parser bug: how many rows show it and the shortest case that does."""

    signature: str
    rows: int = 0
    example: Any = None
    cases: set[str] = field(default_factory=set)
    streaming_only: bool = False

    def add(self, row: Any) -> None:
        """Count a row, keeping the shortest reply as the example."""
        self.rows += 1
        self.cases.add(row.case_id)
        if self.example is None or len(row.reply) < len(self.example.reply):
            self.example = row


@dataclass
class Column:
    """One parser's column of the matrix: verdict counts per syntax and chunking class, declined templates with
    the reason, and its bug classes; `status` says why it has no rows when it has none."""

    name: str
    version: str = ""
    status: str = ""
    run: str = ""
    cells: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    declined: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    bugs: dict[str, Bug] = field(default_factory=dict)
    whole_bugs: set[str] = field(default_factory=set)
    judged_templates: set[str] = field(default_factory=set)

    def declined_modes(self, template: str, modes: set[str]) -> str:
        """The modes a template is declined in: 'every mode' when none of its sessions is read."""
        return "every mode" if template not in self.judged_templates else ", ".join(sorted(modes))

    def add(self, row: Any) -> None:
        """Count one row."""
        found = verdict(row)
        if found == "bug" and row.chunking == "whole":
            self.whole_bugs.add(row.case_id)
        if found == "declined":
            why = (row.error or row.detail).removeprefix(f"{row.template}: ")
            self.declined.setdefault((row.template, why), set()).add(row.mode)
            return
        self.judged_templates.add(row.template)
        cell = self.cells.setdefault((row.syntax, chunking_class(row.chunking)), Counter())
        cell[found] += 1
        outcome = label_outcome(row_label(row))
        if found != "oracle_error" and (outcome == Outcome.MATCH.value or outcome.startswith((POLICY, DEFECT))):
            cell[FINAL] += 1
        if found == "bug" and outcome == f"{Outcome.MISMATCH.value}:{Kind.ACCEPTS.value}":
            cell[ACCEPTS] += 1
        if found == "bug":
            signature = bug_signature(row)
            self.bugs.setdefault(signature, Bug(signature)).add(row)

    def total(self, klass: str, syntax: str | None = None) -> Counter[str]:
        """The verdict counts of a chunking class, of one syntax or all."""
        counts: Counter[str] = Counter()
        for (name, found), cell in self.cells.items():
            if found == klass and syntax in (None, name):
                counts.update(cell)
        return counts


def column_of(name: str, run: Path, templates: str = "*") -> Column:
    """A parser's column from its run store (the rows of the templates the glob selects); a streamed bug class
    is streaming-only when the parser reads every one of its replies whole without a bug."""
    column = Column(name, revision(run), run=str(run))
    for row in store_rows(run, templates):
        column.add(row)
    for bug in column.bugs.values():
        bug.streaming_only = chunking_class(bug.example.chunking) != "whole" and not bug.cases & column.whole_bugs
    return column


def agreement(counts: Counter[str], final: bool = False) -> str:
    """'percent (matched/judged)' of a cell, '' when it holds no judged row; with `final`, also the share of rows
    whose final reading matches, stream checks aside."""
    judged = sum(counts[name] for name in VERDICTS)
    if not judged:
        return ""
    shown = f"{100 * counts['match'] / judged:.0f}% ({counts['match']}/{judged})"
    return shown + f"; final {100 * counts[FINAL] / judged:.0f}%" if final else shown


def syntaxes(columns: Iterable[Column]) -> list[str]:
    """Every syntax any column has rows of, sorted."""
    return sorted({syntax for column in columns for syntax, _ in column.cells})


def markdown(columns: list[Column], reproducers: dict[str, dict[str, str]]) -> str:
    """The matrix as markdown: agreement per parser and chunking class first, then per syntax, rows per label,
    declined templates and bug classes with their reproducers."""
    lines = ["# Peer matrix: agreement with llama.cpp", ""]
    lines += ["| parser | version | " + " | ".join(CLASS_TITLES[klass] for klass in CLASSES) + " | bug classes |",
              "|---|---|" + "---|" * len(CLASSES) + "---|"]
    for column in columns:
        cells = [agreement(column.total(klass), klass != "whole") for klass in CLASSES] if not column.status else \
            [column.status] + [""] * (len(CLASSES) - 1)
        lines.append(f"| {column.name} | {column.version} | " + " | ".join(cells) + f" | {len(column.bugs)} |")
    lines += ["", "Agreement is matching rows over rows judged (match, parser policy, llama.cpp defect, parser bug);",
              "declined sessions and rows where llama.cpp itself failed are not judged. A streamed row matches when its",
              "final reading and every snapshot agree with llama-server's; `final` counts the rows whose final reading",
              "matches or differs only as a policy or a llama.cpp defect explains, stream checks aside.",
              "The quick profile streams by tokens only the tool-call, round-trip and thinking shapes of some tool",
              "modes, so its token-streamed rows are harder replies than its whole ones.", "",
              "## Per syntax", ""]
    names = [column for column in columns if not column.status]
    header = [f"{column.name} {CLASS_TITLES[klass]}" for column in names for klass in CLASSES]
    lines += ["| syntax | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    for syntax in syntaxes(names):
        cells = [agreement(column.total(klass, syntax)) for column in names for klass in CLASSES]
        lines.append(f"| {syntax} | " + " | ".join(cells) + " |")
    lines += ["", "## Rows per label", "", "| parser | chunking | " + " | ".join(VERDICT_TITLES.values())
              + " | of which llama.cpp rejects the reply |", "|---|---|" + "---|" * (len(VERDICTS) + 1)]
    for column in names:
        for klass in CLASSES:
            counts = column.total(klass)
            lines.append(f"| {column.name} | {CLASS_TITLES[klass]} | "
                         + " | ".join(str(counts[name]) for name in (*VERDICTS, ACCEPTS)) + " |")
    for column in columns:
        lines += ["", f"## {column.name}", ""]
        if column.status:
            lines += [f"Not run: {column.status}"]
            continue
        if column.declined:
            lines += ["Declined (not counted):", ""]
            lines += [f"- `{template}` ({column.declined_modes(template, modes)}): {why}"
                      for (template, why), modes in sorted(column.declined.items())]
            lines.append("")
        bugs = sorted(column.bugs.values(), key=lambda bug: (-bug.rows, bug.signature))
        streaming = sum(bug.streaming_only for bug in bugs)
        lines += [f"{len(bugs)} parser-bug classes ({streaming} streaming-only: every reply of the class is read "
                  "whole without a bug)" + (":" if bugs else "."), ""]
        for bug in bugs:
            example = bug.example
            lines += [f"### `{bug.signature}`: {bug.rows} rows" + (" (streaming-only)" if bug.streaming_only else ""),
                      "",
                      (f"`chatparity show {example.case_id} {column.run}` ({example.template}, {example.mode}, "
                      f"{example.chunking})"), ""]
            code = reproducers.get(column.name, {}).get(bug.signature)
            if code:
                lines += ["```python", code.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def as_json(columns: list[Column], reproducers: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The matrix as JSON: every count, declined template and bug class."""
    return {"parsers": [{
        "name": column.name, "version": column.version, "status": column.status, "run": column.run,
        "cells": [{"syntax": syntax, "chunking": klass, **{name: counts[name] for name in (*VERDICTS, ACCEPTS, FINAL)}}
                  for (syntax, klass), counts in sorted(column.cells.items())],
        "totals": {klass: {name: column.total(klass)[name] for name in (*VERDICTS, ACCEPTS, FINAL)} for klass in CLASSES},
        "declined": [{"template": template, "reason": why, "modes": sorted(modes)}
                     for (template, why), modes in sorted(column.declined.items())],
        "bugs": [{"signature": bug.signature, "rows": bug.rows, "streaming_only": bug.streaming_only,
                  "case": bug.example.case_id,
                  "template": bug.example.template, "chunking": bug.example.chunking,
                  "reproducer": reproducers.get(column.name, {}).get(bug.signature, "")}
                 for bug in sorted(column.bugs.values(), key=lambda bug: (-bug.rows, bug.signature))],
    } for column in columns]}


def html_page(columns: list[Column], reproducers: dict[str, dict[str, str]]) -> str:
    """The matrix as one HTML page: agreement per parser, syntax and chunking class, each parser linked to its
    run's own report (every difference, with its `chatparity show` command), each bug class with its show
    command and reproducer."""
    judged = [column for column in columns if not column.status]
    head = "".join(f"<th>{escape(column.name)} {CLASS_TITLES[klass]}</th>" for column in judged for klass in CLASSES)
    rows = [f"<tr><th>all</th>{''.join(cell(column.total(klass)) for column in judged for klass in CLASSES)}</tr>"]
    rows += [f"<tr><th>{escape(syntax)}</th>"
             + "".join(cell(column.total(klass, syntax)) for column in judged for klass in CLASSES) + "</tr>"
             for syntax in syntaxes(judged)]
    parts = ["<!doctype html><meta charset='utf-8'><title>Peer matrix</title>",
             "<style>td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:collapse}</style>",
             "<h1>Peer matrix: agreement with llama.cpp</h1>", "<ul>"]
    parts += [f"<li>{escape(column.name)} {escape(column.version)}: "
              + (escape(column.status) if column.status else
                 f"<a href='{escape(column.run)}/report.html'>every difference</a>") + "</li>" for column in columns]
    parts += ["</ul>", f"<table><tr><th>syntax</th>{head}</tr>{''.join(rows)}</table>"]
    for column in judged:
        bugs = sorted(column.bugs.values(), key=lambda bug: (-bug.rows, bug.signature))
        parts.append(f"<h2>{escape(column.name)}: {len(bugs)} parser-bug classes</h2>")
        for bug in bugs:
            parts.append(f"<h3>{escape(bug.signature)}: {bug.rows} rows</h3><code>"
                         f"{escape(f'chatparity show {bug.example.case_id} {column.run}')}</code>")
            code = reproducers.get(column.name, {}).get(bug.signature)
            if code:
                parts.append(f"<pre>{escape(code)}</pre>")
    return "\n".join(parts) + "\n"


def cell(counts: Counter[str]) -> str:
    """One table cell: the agreement, shaded by it."""
    judged = sum(counts[name] for name in VERDICTS)
    if not judged:
        return "<td></td>"
    share = counts["match"] / judged
    return f"<td style='background:hsl({int(120 * share)},60%,85%)'>{escape(agreement(counts))}</td>"


def write(out: Path, columns: list[Column], reproducers: dict[str, dict[str, str]]) -> tuple[Path, Path]:
    """peers.md, peers.html and peers.json under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    text, data = out / "peers.md", out / "peers.json"
    text.write_text(markdown(columns, reproducers), encoding="utf-8")
    (out / "peers.html").write_text(html_page(columns, reproducers), encoding="utf-8")
    data.write_text(json.dumps(as_json(columns, reproducers), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return text, data
