"""The peer matrix: for each parser (the peers, the project's `reply`, llama.cpp against itself) and each
reply syntax, how its rows agree with llama.cpp whole, token-streamed and character-streamed, each row
labelled as the harness labels it (match, parser policy, llama.cpp defect, parser bug); the templates each
parser declines; and each class of parser bug with a representative case."""

from __future__ import annotations

import fnmatch
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
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
VERDICT_TITLES = {
    "match": "match",
    "policy": "parser policy",
    "defect": "llama.cpp defect",
    "bug": "parser bug",
}
TOKEN_CHUNKINGS = ("tokens", "special")
ROW_COLUMNS = (
    "case_id",
    "chunking",
    "session_id",
    "template",
    "syntax",
    "mode",
    "origin",
    "shape",
    "partial",
    "reply",
    "oracle_reading",
    "parser_reading",
    "error",
    "detail",
    "oracle_grammar",
)
ACCEPTS = "bug_accepts"
"""Parser bugs where llama.cpp rejects the reply (its parse of the finished reply fails) and the parser reads
it."""
OFF_GRAMMAR = "bug_off_grammar"
"""Parser bugs on a finished reply llama.cpp's grammar for the request would not let a model write (it rejects
the reply, or cannot end it): robustness more than a reading a served model would meet."""
OFF_GRAMMAR_VERDICTS = ("rejects", "incomplete")
FINAL = "final_agrees"
"""Rows whose final reading matches llama.cpp's or differs only as a policy or a llama.cpp defect explains,
whatever their stream checks say."""
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
    """What one class of parser bug has in common: the syntax, the chunking class, whether the reply is cut,
    the outcome and the checks broken."""
    label = row_label(row)
    checks = ",".join(sorted(label_checks(label)))
    return " ".join(
        part
        for part in (
            row.syntax,
            chunking_class(row.chunking),
            "cut" if row.partial else "",
            label_outcome(label),
            f"!{checks}" if checks else "",
        )
        if part
    )


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
    """One parser's column of the matrix: verdict counts per syntax and chunking class, declined templates
    with the reason, and its bug classes; `status` says why it has no rows when it has none."""

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
        if found != "oracle_error" and (
            outcome == Outcome.MATCH.value or outcome.startswith((POLICY, DEFECT))
        ):
            cell[FINAL] += 1
        if found == "bug" and outcome == f"{Outcome.MISMATCH.value}:{Kind.ACCEPTS.value}":
            cell[ACCEPTS] += 1
        if found == "bug" and not row.partial and (row.oracle_grammar or "").startswith(OFF_GRAMMAR_VERDICTS):
            cell[OFF_GRAMMAR] += 1
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
        bug.streaming_only = (
            chunking_class(bug.example.chunking) != "whole" and not bug.cases & column.whole_bugs
        )
    return column
