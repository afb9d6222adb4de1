"""The rows a server-backed parser (llama-server) did not write as the reply: counted by cause and listed, never
judged as parsing."""

from __future__ import annotations

import pandas as pd

from chatparity.model import Outcome
from reports.tables import markdown_table

LISTED = 40


def not_written_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The not-written rows with their cause (the error's text before its first colon) and detail."""
    found = rows[rows["outcome"] == Outcome.NOT_WRITTEN.value]
    error = found["error"].fillna("")
    return found.assign(cause=error.str.split(":", n=1).str[0], detail=error.str.split(":", n=1).str[1].str.strip())


def not_written_section(rows: pd.DataFrame) -> list[str]:
    """The report's section on the rows the server did not write (none when every row was written)."""
    found = not_written_rows(rows)
    if found.empty:
        return []
    counts = found.groupby(["cause", "syntax"]).size().rename("rows").reset_index()
    listed = found.drop_duplicates("case_id").head(LISTED)
    return [
        f"## Rows the server did not write ({len(found):,}; not judged as parsing)", "",
        markdown_table(counts), "",
        markdown_table(listed[["cause", "template", "mode", "shape", "chunking", "detail"]], 160), "",
    ]
