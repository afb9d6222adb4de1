"""Template coverage of a run: what rendered, what ran, how well, and what the parser does not handle."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reports.groups import distinct_codes
from reports.multiturn import append_safe_for_run
from reports.runs import Run
from reports.statuses import ORACLE_ERRORS, PARSER_ERRORS, Status
from reports.tables import FLAG, markdown_table, rate, ratio

WIDTH = 80
CALLING_TOOL_MODES = ("auto", "required", "parallel")


@dataclass(frozen=True)
class Coverage:
    """Per template and per family coverage, the sessions the parser declined or that could not run, and the
    templates offered tools where llama.cpp reads no call (their call path is checked on refusals only)."""

    templates: pd.DataFrame
    families: pd.DataFrame
    unsupported: pd.DataFrame
    not_run: pd.DataFrame
    no_calls_read: pd.DataFrame


def reads_a_call(reading: object) -> bool:
    """Whether a stored reading (JSON text) is a message with at least one tool call."""
    if not isinstance(reading, str) or '"tool_calls"' not in reading:
        return False
    found = json.loads(reading)
    return isinstance(found, dict) and bool(found.get("tool_calls"))


def _rates(rows: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group: finished and partial match counts over the rows the parser reads, errors, rows a policy or a
    llama.cpp defect accounts for, cases per origin."""
    codes, readings = distinct_codes(rows["oracle_reading"])
    reads_calls = np.array([reads_a_call(reading) for reading in readings], dtype=bool)[codes]
    frame = pd.DataFrame(
        {
            by: rows[by],
            "case_id": rows["case_id"],
            "origin": rows["origin"],
            "is_match": (rows["status"] == Status.MATCH.value).astype(FLAG),
            "read": (rows["status"] != Status.UNSUPPORTED.value).astype(FLAG),
            "finished": (rows["partial"] == 0).astype(FLAG),
            "errors": rows["outcome"].isin([*ORACLE_ERRORS, *PARSER_ERRORS]).astype(FLAG),
            "policy": (rows["status"] == Status.POLICY.value).astype(FLAG),
            "defect": (rows["status"] == Status.DEFECT.value).astype(FLAG),
            "calls_read": ((rows["chunking"] == "whole") & reads_calls).astype(FLAG),
        },
        copy=False,
    )
    frame = frame.assign(
        finished_match=frame["is_match"] * frame["finished"],
        finished_read=frame["read"] * frame["finished"],
        partial_rows=frame["read"] * (1 - frame["finished"]),
        partial_match=frame["is_match"] * (1 - frame["finished"]),
    )
    sums = frame.groupby(by)[
        ["finished_read", "finished_match", "partial_rows", "partial_match", "errors", "policy", "defect",
         "calls_read"]
    ].sum()
    sums["cases"] = frame.groupby(by)["case_id"].nunique()
    per_origin = frame.drop_duplicates("case_id").groupby([by, "origin"]).size()
    sums["cases by corpus"] = pd.Series(
        [
            ", ".join(f"{origin} {count}" for origin, count in per_origin[group].items())
            if group in per_origin.index
            else ""
            for group in sums.index
        ],
        index=sums.index,
        dtype=object,
    )
    return sums


def _session_columns(sessions: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group: sessions, how many render in jinja2 and in llama.cpp, prompt parity, modes, unsupported."""
    grouped = sessions.groupby(by)
    table = pd.DataFrame(
        {
            "sessions": grouped.size(),
            "jinja2 renders": grouped["jinja_renders"].sum(),
            "llama.cpp renders": grouped["oracle_renders"].sum(),
            "prompt parity": grouped["prompt_parity"].apply(lambda parity: int((parity == "equal").sum())),
            "unsupported sessions": grouped["status"].apply(
                lambda status: int((status == "unsupported").sum())
            ),
        }
    )
    table["first parity difference"] = grouped["prompt_parity"].apply(
        lambda parity: next((value for value in sorted(parity) if value != "equal"), "")
    )
    table["modes"] = grouped["mode"].apply(lambda modes: ", ".join(sorted(set(modes))))
    return table


def _table(run: Run, rows: pd.DataFrame, by: str) -> pd.DataFrame:
    """The coverage table grouped by template or family."""
    sessions = _session_columns(run.sessions, by)
    rates = _rates(rows, by)
    table = pd.DataFrame(index=sorted(set(sessions.index) | set(rates.index)))
    table.index.name = by
    if by == "template":
        first = run.sessions.drop_duplicates("template").set_index("template")
        table["family"] = [first.at[name, "family"] if name in first.index else "" for name in table.index]
        table["syntax"] = [first.at[name, "syntax"] if name in first.index else "" for name in table.index]
    else:
        table["templates"] = (
            run.sessions.groupby(by)["template"].nunique().reindex(table.index).fillna(0).astype(int)
        )
    counts = sessions.reindex(table.index)
    total = counts["sessions"].fillna(0).astype(int)
    for column in ("jinja2 renders", "llama.cpp renders", "prompt parity"):
        table[column] = [ratio(int(part), int(whole)) for part, whole in zip(counts[column].fillna(0), total)]
    table["first parity difference"] = counts["first parity difference"].fillna("")
    table["modes run"] = counts["modes"].fillna("")
    rates = rates.reindex(table.index)
    table["cases"] = rates["cases"].fillna(0).astype(int)
    table["cases by corpus"] = rates["cases by corpus"].fillna("")
    table["finished match"] = [
        rate(int(m), int(t)) for m, t in zip(rates["finished_match"].fillna(0), rates["finished_read"].fillna(0))
    ]
    table["partial match"] = [
        rate(int(m), int(t))
        for m, t in zip(rates["partial_match"].fillna(0), rates["partial_rows"].fillna(0))
    ]
    table["errors"] = rates["errors"].fillna(0).astype(int)
    table["parser policy"] = rates["policy"].fillna(0).astype(int)
    table["llama.cpp defect"] = rates["defect"].fillna(0).astype(int)
    table["cases llama.cpp reads a call in"] = rates["calls_read"].fillna(0).astype(int)
    table["unsupported sessions"] = counts["unsupported sessions"].fillna(0).astype(int)
    return table.reset_index()


def coverage(run: Run, rows: pd.DataFrame) -> Coverage:
    """Coverage of a run, given its classified rows."""
    declined = run.sessions[run.sessions["status"] == "unsupported"]
    sessions = run.sessions.groupby("template").size()
    unsupported = (
        declined.groupby("template")
        .agg(
            count=("mode", "size"),
            modes=("mode", lambda labels: ", ".join(sorted(set(labels)))),
            error=("error", "first"),
        )
        .reset_index()
    )
    totals = [int(sessions.get(name, 0)) for name in unsupported["template"]]
    unsupported.insert(1, "at all", [count == total for count, total in zip(unsupported["count"], totals)])
    unsupported.insert(
        2, "sessions", [ratio(count, total) for count, total in zip(unsupported["count"], totals)]
    )
    unsupported = unsupported.drop(columns="count")
    not_run = run.sessions[~run.sessions["status"].isin(["ok", "unsupported"])][
        ["template", "mode", "status", "error"]
    ].reset_index(drop=True)
    templates = _table(run, rows, "template")
    offered = set(run.sessions.loc[run.sessions["tools"].isin(CALLING_TOOL_MODES), "template"])
    no_calls_read = templates.loc[
        templates["template"].isin(offered) & (templates["cases"] > 0)
        & (templates["cases llama.cpp reads a call in"] == 0),
        ["template", "family", "syntax", "cases"],
    ].reset_index(drop=True)
    append_safe = append_safe_for_run(run.directory, run.parser_spec)
    if append_safe is not None:
        templates["append-safe (multiturn)"] = [append_safe.get(name, "") for name in templates["template"]]
    return Coverage(
        templates=templates,
        families=_table(run, rows, "family"),
        unsupported=unsupported,
        not_run=not_run,
        no_calls_read=no_calls_read,
    )


def coverage_markdown(result: Coverage) -> str:
    """Coverage as markdown: families, templates, what the parser does not handle, sessions not run."""
    brief = result.templates.drop(columns=["modes run"])
    return "\n".join(
        [
            "# Template coverage",
            "",
            "## Per family",
            "",
            markdown_table(result.families.drop(columns=["modes run"]), WIDTH),
            "",
            "## Per template",
            "",
            markdown_table(brief, WIDTH),
            "",
            "## Templates and modes the parser does not handle",
            "",
            markdown_table(result.unsupported, WIDTH),
            "",
            "## Sessions that could not run (render errors)",
            "",
            markdown_table(result.not_run, WIDTH),
            "",
            "## Templates offered tools where llama.cpp reads no call",
            "",
            "Their call path is checked only where both readers refuse or read the reply as text.",
            "",
            markdown_table(result.no_calls_read, WIDTH),
            "",
        ]
    )
