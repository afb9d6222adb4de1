"""The report's section on the rows a server did not write: none when all were written, else counts by cause."""

from __future__ import annotations

import pandas as pd

from reports.not_written import not_written_section


def rows(*outcomes: tuple[str, str]) -> pd.DataFrame:
    """Rows with these (outcome, error) pairs and the columns the section shows."""
    return pd.DataFrame([
        {"case_id": f"c{n}", "outcome": outcome, "error": error, "syntax": "hermes", "template": "t.jinja",
         "mode": "think/auto", "shape": "s", "chunking": "whole"}
        for n, (outcome, error) in enumerate(outcomes)
    ])


def test_no_section_when_every_row_was_written() -> None:
    assert not_written_section(rows(("match", ""))) == []


def test_rows_counted_by_cause() -> None:
    section = "\n".join(not_written_section(rows(
        ("match", ""),
        ("not_written", "not writable under the server's tool grammar: the server wrote 'x' at 3"),
        ("not_written", "not writable under the server's tool grammar: the server wrote 'y' at 4"),
        ("not_written", "too long for the tape: 700 tokens"),
    )))
    assert "did not write (3;" in section
    assert "| not writable under the server's tool grammar | hermes   | 2      |" in section
    assert "the server wrote 'y' at 4" in section
