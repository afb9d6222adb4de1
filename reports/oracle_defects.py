"""Where llama.cpp itself is wrong: oracle readings compared with the truth of generated replies."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pandas as pd

from reports.runs import Run, chunking_key
from reports.tables import markdown_table

CLUSTER_COLUMNS = (
    "template", "shape", "defect", "field", "cases", "mode", "tools", "kwargs", "conversation", "partial",
    "case_id", "oracle_vs_truth", "reply", "returned", "meant",
)

MARKER = re.compile(
    r"<\|[^<>|]{1,40}\|>|</?[A-Za-z_][\w:.-]{0,30}>|\[/?[A-Z][A-Z_]{2,30}\]|<｜[^｜]{1,40}｜>"
)


class Defect(str, Enum):
    """How llama.cpp's reading of a reply departs from the message the template wrote."""

    REJECTS_OWN = "rejects what its template wrote"
    LOSES_CALL = "loses a call"
    INVENTS_CALL = "invents a call"
    INVALID_ARGUMENTS = "returns invalid arguments"
    MARKERS_IN_TEXT = "leaves markers in content"
    MOVES_TEXT = "moves text between content and reasoning"
    WHITESPACE = "keeps or trims whitespace"
    DROPS_TEXT = "drops text"
    WRONG_CALL = "changes a call"
    ALTERS_TEXT = "alters text"


@dataclass(frozen=True)
class DefectReport:
    """Per template and shape counts of each defect, and clusters each with a minimal reproducer."""

    counts: pd.DataFrame
    clusters: pd.DataFrame


def _valid_json(text: str) -> bool:
    """Whether text parses as JSON."""
    try:
        json.loads(text)
    except (ValueError, TypeError):
        return False
    return True


def _arguments(text: str) -> Any:
    """Call arguments as parsed JSON where they parse, else the text."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def _markers(text: str) -> set[str]:
    """Marker-like tokens in a text (special tokens, tags, bracketed names)."""
    return set(MARKER.findall(text))


def classify_defect(oracle: dict[str, Any], truth: dict[str, Any]) -> Defect:
    """The first way (in Defect order) an oracle reading departs from the truth."""
    if "rejected" in oracle:
        return Defect.REJECTS_OWN
    calls, meant = oracle.get("tool_calls") or [], truth.get("tool_calls") or []
    if len(calls) < len(meant):
        return Defect.LOSES_CALL
    if len(calls) > len(meant):
        return Defect.INVENTS_CALL
    if any(not _valid_json(call.get("arguments", "")) for call in calls):
        return Defect.INVALID_ARGUMENTS
    fields = ("content", "reasoning_content")
    got = {field: oracle.get(field) or "" for field in fields}
    want = {field: truth.get(field) or "" for field in fields}
    if any(_markers(got[field]) - _markers(want[field]) for field in fields):
        return Defect.MARKERS_IN_TEXT
    for field, other in (fields, fields[::-1]):
        missing = want[field].strip()
        if missing and missing not in got[field] and missing in got[other]:
            return Defect.MOVES_TEXT
    if got != want and all(got[field].strip() == want[field].strip() for field in fields):
        return Defect.WHITESPACE
    if any(
        got[field] != want[field] and len(got[field].strip()) < len(want[field].strip()) for field in fields
    ):
        return Defect.DROPS_TEXT
    pairs = zip(calls, meant)
    if any(
        c.get("name") != m.get("name")
        or _arguments(c.get("arguments", "")) != _arguments(m.get("arguments", ""))
        for c, m in pairs
    ):
        return Defect.WRONG_CALL
    return Defect.ALTERS_TEXT


CALL_DEFECTS = (Defect.LOSES_CALL, Defect.INVENTS_CALL, Defect.INVALID_ARGUMENTS, Defect.WRONG_CALL)


def differing_field(defect: Defect, oracle: dict[str, Any], truth: dict[str, Any]) -> str:
    """Where a defect shows: 'tool_calls' for call defects, else the first text field that differs."""
    if defect is Defect.REJECTS_OWN:
        return "the whole reply"
    if defect in CALL_DEFECTS:
        return "tool_calls"
    for field in ("content", "reasoning_content"):
        if (oracle.get(field) or "") != (truth.get(field) or ""):
            return field
    return "tool_calls"


def truth_rows(run: Run) -> pd.DataFrame:
    """One row per case whose oracle reading departs from its truth (the oracle's read ignores chunking)."""
    rows = run.rows[
        run.rows["oracle_vs_truth"].notna()
        & (run.rows["oracle_vs_truth"] != "match")
        & run.rows["oracle_reading"].notna()
        & run.rows["truth"].notna()
    ].copy()
    rows["_chunk"] = [chunking_key(chunking) for chunking in rows["chunking"]]
    rows = (
        rows.sort_values(["case_id", "_chunk"], kind="stable")
        .drop_duplicates("case_id")
        .drop(columns="_chunk")
    )
    readings = [
        (json.loads(oracle), json.loads(truth))
        for oracle, truth in zip(rows["oracle_reading"], rows["truth"])
    ]
    defects = [classify_defect(oracle, truth) for oracle, truth in readings]
    rows["defect"] = [defect.value for defect in defects]
    rows["field"] = [differing_field(defect, *pair) for defect, pair in zip(defects, readings)]
    return rows


def oracle_defects(run: Run) -> DefectReport:
    """Counts of oracle defects per template and shape, and one cluster per (template, shape, defect)."""
    rows = truth_rows(run)
    sessions = run.sessions.set_index("session_id")
    if rows.empty:
        return DefectReport(
            counts=pd.DataFrame(columns=["template", "shape", "defect", "cases"]),
            clusters=pd.DataFrame(columns=list(CLUSTER_COLUMNS)),
        )
    counts = (
        rows.groupby(["template", "shape", "defect"])
        .size()
        .rename("cases")
        .reset_index()
        .sort_values(["template", "shape", "defect"], kind="stable")
        .reset_index(drop=True)
    )
    rows["_length"] = rows["reply"].str.len()
    ordered = rows.sort_values(["template", "shape", "defect", "_length", "case_id"], kind="stable")
    grouped = ordered.groupby(["template", "shape", "defect"], sort=False)
    clusters = (
        grouped.first().reset_index().join(grouped.size().rename("cases"), on=["template", "shape", "defect"])
    )
    clusters["kwargs"] = [
        sessions.at[sid, "kwargs"] if sid in sessions.index else "" for sid in clusters["session_id"]
    ]
    clusters = clusters.rename(columns={"oracle_reading": "returned", "truth": "meant"})
    clusters = clusters.sort_values(
        ["cases", "template", "shape", "defect"], ascending=[False, True, True, True], kind="stable"
    )
    return DefectReport(counts=counts, clusters=clusters[list(CLUSTER_COLUMNS)].reset_index(drop=True))


def _pretty(text: str) -> str:
    """A reading's JSON text indented for reading."""
    return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)


def _fence(text: str) -> str:
    """A fenced markdown code block that survives backticks inside the text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def candidate_entry(cluster: pd.Series) -> str:
    """A known-divergences entry a maintainer could paste for this cluster."""
    return "\n".join(
        [
            "[[divergence]]",
            f"template = {json.dumps(cluster['template'])}",
            f"shape = {json.dumps(cluster['shape'])}",
            f"kind = {json.dumps(cluster['oracle_vs_truth'])}",
            f"reason = {json.dumps(f'llama.cpp {cluster.defect} in {cluster.field}')}",
        ]
    )


def session_command(cluster: pd.Series, profile: str) -> str:
    """The command printing the cluster's session (messages, tools) and replies."""
    return (
        f"chatparity corpus --profile {shlex.quote(profile)} --template {shlex.quote(cluster['template'])} "
        f"--mode {shlex.quote(cluster['mode'])}"
    )


def defects_markdown(report: DefectReport, profile: str = "quick") -> str:
    """The oracle defects as markdown: counts per template and shape, then each cluster's reproducer."""
    parts = [
        "# Where llama.cpp departs from the template's own meaning",
        "",
        (
            f"Cases with truth where llama.cpp's reading is not the message the template wrote: "
            f"{int(report.counts['cases'].sum()) if not report.counts.empty else 0}."
        ),
        "",
        markdown_table(report.counts),
    ]
    for number, cluster in report.clusters.iterrows():
        parts += [
            "",
            (
                f"## {number + 1}. {cluster['template']}: {cluster['defect']} in {cluster['field']} "
                f"(shape {cluster['shape']}, cases: {cluster['cases']})"
            ),
            "",
            (
                f"- request: mode `{cluster['mode']}`, tools `{cluster['tools']}`, "
                f"kwargs `{cluster['kwargs']}`, conversation `{cluster['conversation']}`, "
                f"{'partial' if cluster['partial'] else 'finished'} reply"
            ),
            (
                f"- case: `{cluster['case_id']}`; the session's messages and tools: "
                f"`{session_command(cluster, profile)}`"
            ),
            "",
            "Reply:",
            "",
            _fence(cluster["reply"]),
            "",
            "llama.cpp returned:",
            "",
            _fence(_pretty(cluster["returned"])),
            "",
            "The template meant:",
            "",
            _fence(_pretty(cluster["meant"])),
            "",
            "Known-divergence candidate:",
            "",
            _fence(candidate_entry(cluster)),
        ]
    return "\n".join(parts) + "\n"
