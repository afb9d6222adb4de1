"""Where llama.cpp itself is wrong: oracle readings compared with the truth of generated replies, and oracle
readings that break a structural check."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pandas as pd

from reports.groups import error_head
from reports.runs import Run, chunking_key, read_rows
from reports.show import request_json, session_requests, show_command
from reports.statuses import STRUCTURAL_CHECKS
from reports.tables import markdown_table

CLUSTER_COLUMNS = (
    "defect",
    "field",
    "signature",
    "cases",
    "templates",
    "shapes",
    "template",
    "shape",
    "syntax",
    "mode",
    "tools",
    "kwargs",
    "conversation",
    "partial",
    "case_id",
    "oracle_vs_truth",
    "reply",
    "returned",
    "meant",
    "request",
)
COUNT_COLUMNS = ["defect", "field", "signature", "template", "shape", "cases"]
READ = [
    "case_id",
    "chunking",
    "session_id",
    "template",
    "syntax",
    "mode",
    "tools",
    "conversation",
    "shape",
    "partial",
    "oracle_vs_truth",
    "oracle_structure_detail",
    "reply",
    "truth",
    "oracle_reading",
]
"""The row columns the defects are found in and reported with."""

MARKER = re.compile(
    r"<\|[^<>|]{1,40}\|>|</?[A-Za-z_][\w:.-]{0,30}>|\[/?[A-Z][A-Z_]{2,30}\]|<｜[^｜]{1,40}｜>"
)


class Defect(str, Enum):
    """How llama.cpp's reading of a reply departs from the message the template wrote."""

    REJECTS_OWN = "rejects a reply whose meaning is clear"
    LOSES_CALL = "loses a call"
    INVENTS_CALL = "invents a call"
    INVALID_ARGUMENTS = "returns invalid arguments"
    MARKERS_IN_TEXT = "leaves markers in content"
    MOVES_TEXT = "moves text between content and reasoning"
    WHITESPACE = "keeps or trims whitespace"
    DROPS_TEXT = "drops text"
    WRONG_CALL = "changes a call"
    ALTERS_TEXT = "alters text"
    ARGUMENTS_NOT_OBJECT = "returns arguments that are not a JSON object"
    OFF_SCHEMA = "returns a call the offered tools do not allow"
    LEAKS_MARKER = "leaks a template marker"
    PARALLEL_DISORDER = "returns parallel calls incomplete or out of order"


STRUCTURAL_DEFECTS = {
    "arguments_json": Defect.ARGUMENTS_NOT_OBJECT,
    "arguments_schema": Defect.OFF_SCHEMA,
    "no_leakage": Defect.LEAKS_MARKER,
    "parallel_order": Defect.PARALLEL_DISORDER,
}
FIELD_KINDS = {"content": "content", "reasoning_content": "reasoning"}
INDEX = re.compile(r"\[\d+\]")
OFFSET = re.compile(r" @\d+")


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
    rows = read_rows(
        run,
        READ,
        "oracle_vs_truth IS NOT NULL AND oracle_vs_truth != 'match' AND oracle_reading IS NOT NULL "
        "AND truth IS NOT NULL",
    )
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


def structure_rows(run: Run) -> pd.DataFrame:
    """One row per case whose oracle reading breaks a structural check (the 'whole' row first), with the
    defect, the field it shows in and what broke."""
    broken = read_rows(run, READ, " OR ".join(f"oracle_{check} = 0" for check in STRUCTURAL_CHECKS))
    broken["_chunk"] = [chunking_key(chunking) for chunking in broken["chunking"]]
    broken = (
        broken.sort_values(["case_id", "_chunk"], kind="stable")
        .drop_duplicates("case_id")
        .drop(columns="_chunk")
    )
    details = [detail.partition(": ")[2] for detail in broken["oracle_structure_detail"]]
    checks = [detail.partition(":")[0] for detail in broken["oracle_structure_detail"]]
    fields = [INDEX.sub("[]", detail.split(" ", 1)[0]) for detail in details]
    broken["defect"] = [STRUCTURAL_DEFECTS[check].value for check in checks]
    broken["field"] = fields
    broken["signature"] = [
        error_head(OFFSET.sub("", INDEX.sub("[]", detail))) if check != "no_leakage" else OFFSET.sub("", detail)
        for check, detail in zip(checks, details)
    ]
    broken["oracle_vs_truth"] = [
        FIELD_KINDS.get(field, "calls") if check == "no_leakage" else "calls"
        for check, field in zip(checks, fields)
    ]
    return broken


def _edges(text: str) -> tuple[str, str]:
    """A text's leading and trailing whitespace."""
    stripped = text.strip()
    if not stripped:
        return text, ""
    start = text.index(stripped)
    return text[:start], text[start + len(stripped) :]


def signature(defect: Defect, field: str, oracle: dict[str, Any], truth: dict[str, Any]) -> str:
    """What exactly differs, in words that are the same wherever the same defect shows."""
    if defect is Defect.REJECTS_OWN:
        return f"error: {error_head(str(oracle.get('rejected', '')))}"
    if defect is Defect.WHITESPACE:
        got, want = _edges(oracle.get(field) or ""), _edges(truth.get(field) or "")
        sides = [
            f"{side} {want_edge!r} read as {got_edge!r}"
            for side, got_edge, want_edge in zip(("leading", "trailing"), got, want)
            if got_edge != want_edge
        ]
        return "; ".join(sides) or "whitespace inside the text"
    if defect is Defect.MARKERS_IN_TEXT:
        added = set()
        for name in ("content", "reasoning_content"):
            added |= _markers(oracle.get(name) or "") - _markers(truth.get(name) or "")
        return "markers " + ", ".join(sorted(added))
    if defect in (Defect.LOSES_CALL, Defect.INVENTS_CALL):
        return (
            f"{len(oracle.get('tool_calls') or [])} calls read, {len(truth.get('tool_calls') or [])} written"
        )
    return field


def cluster_requests(run: Run, clusters: pd.DataFrame) -> list[str]:
    """Each cluster's session request as pretty JSON ('' when it is gone), each template and mode planned
    again once."""
    places = list(zip(clusters["template"].tolist(), clusters["mode"].tolist()))
    planned = {place: session_requests(run, *place) for place in dict.fromkeys(places)}
    found = [planned[place].get(session) for place, session in zip(places, clusters["session_id"].tolist())]
    return ["" if request is None else request_json(request) for request in found]


def oracle_defects(run: Run, requests: bool = True) -> DefectReport:
    """Counts per defect and template, and one entry per distinct defect with its shortest reproducer.

    A distinct defect is the way llama.cpp departs from the truth (defect, field and what exactly differs),
    wherever it shows; its entry lists the templates and shapes it shows on.
    """
    rows = truth_rows(run)
    rows["signature"] = [
        signature(Defect(defect), field, json.loads(oracle), json.loads(truth))
        for defect, field, oracle, truth in zip(
            rows["defect"], rows["field"], rows["oracle_reading"], rows["truth"]
        )
    ]
    structural = structure_rows(run)
    rows = pd.concat([frame for frame in (rows, structural) if not frame.empty] or [rows], ignore_index=True)
    if rows.empty:
        return DefectReport(
            counts=pd.DataFrame(columns=COUNT_COLUMNS), clusters=pd.DataFrame(columns=list(CLUSTER_COLUMNS))
        )
    keys = ["defect", "field", "signature"]
    counts = (
        rows.groupby([*keys, "template", "shape"])
        .size()
        .rename("cases")
        .reset_index()
        .sort_values([*keys, "template", "shape"], kind="stable")
        .reset_index(drop=True)
    )
    rows["_length"] = rows["reply"].str.len()
    ordered = rows.sort_values([*keys, "_length", "case_id"], kind="stable")
    grouped = ordered.groupby(keys, sort=False)
    clusters = ordered.drop_duplicates(keys).reset_index(drop=True)
    spans = grouped.agg(
        cases=("case_id", "nunique"),
        templates=("template", lambda names: ", ".join(sorted(set(names)))),
        shapes=("shape", lambda names: ", ".join(sorted(set(names)))),
    )
    clusters = clusters.join(spans, on=keys)
    sessions = run.sessions.set_index("session_id")
    clusters["kwargs"] = [
        sessions.at[sid, "kwargs"] if sid in sessions.index else "" for sid in clusters["session_id"]
    ]
    clusters["request"] = cluster_requests(run, clusters) if requests else ""
    clusters = clusters.rename(columns={"oracle_reading": "returned", "truth": "meant"})
    clusters = clusters.sort_values([*keys], kind="stable").sort_values(
        "cases", ascending=False, kind="stable"
    )
    return DefectReport(
        counts=counts[COUNT_COLUMNS], clusters=clusters[list(CLUSTER_COLUMNS)].reset_index(drop=True)
    )


def _pretty(text: str) -> str:
    """A reading's JSON text indented for reading."""
    return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)


def _fence(text: str, language: str = "") -> str:
    """A fenced markdown code block that survives backticks inside the text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def candidate_entry(cluster: pd.Series) -> str:
    """A known-divergences entry a parser's maintainer could paste for this defect."""
    return "\n".join(
        [
            "[[divergence]]",
            f"syntax = {json.dumps(cluster['syntax'])}",
            f"shape = {json.dumps(cluster['shape'])}",
            f"kind = {json.dumps(cluster['oracle_vs_truth'])}",
            f"reason = {json.dumps(f'llama.cpp {cluster.defect} in {cluster.field}: {cluster.signature}')}",
        ]
    )


def defects_markdown(report: DefectReport, run: Run) -> str:
    """The oracle defects as markdown: one entry per distinct defect, each ready for an upstream issue."""
    stamp = run.stamp
    commit = stamp.get("llama_cpp_commit", "?")
    version = stamp.get("llama_cpp_python_version", "?")
    cases = int(report.clusters["cases"].sum()) if not report.clusters.empty else 0
    parts = [
        "# Where llama.cpp departs from the template's own meaning",
        "",
        (
            f"llama.cpp commit `{commit}` (as vendored by llama-cpp-python {version}), reasoning format "
            f"`deepseek`. {cases} cases are read otherwise than the message their template wrote, or read into "
            f"a message that breaks a structural check ({', '.join(STRUCTURAL_CHECKS)}); they make "
            f"{len(report.clusters)} distinct defects."
        ),
        "",
        markdown_table(report.clusters[["defect", "field", "signature", "cases", "templates"]], 80),
    ]
    for number, cluster in report.clusters.iterrows():
        parts += [
            "",
            f"## {number + 1}. llama.cpp {cluster['defect']} in {cluster['field']}: {cluster['signature']}",
            "",
            f"- seen in {cluster['cases']} cases, on {cluster['templates']}; shapes {cluster['shapes']}",
            (
                f"- llama.cpp commit `{commit}`; template `models/templates/{cluster['template']}`; mode "
                f"`{cluster['mode']}` (kwargs `{cluster['kwargs']}`); reasoning format `deepseek`; "
                f"{'a partial (cut) reply' if cluster['partial'] else 'a finished reply'}"
            ),
            f"- the case in full, and a command that replays it: `{show_command(cluster['case_id'], run.directory)}`",
            "",
            "Request (the chat request before the reply):",
            "",
            _fence(cluster["request"] or "(not planned by this checkout any more)", "json"),
            "",
            "Reply (the model's text after the generation prompt):",
            "",
            _fence(cluster["reply"]),
            "",
            "llama.cpp returned:",
            "",
            _fence(_pretty(cluster["returned"]), "json"),
            "",
            "The template meant:",
            "",
            _fence(_pretty(cluster["meant"]), "json")
            if isinstance(cluster["meant"], str)
            else "(not known: the corpus carries no truth for this reply)",
            "",
            "Known-divergence candidate for a parser that reads it as the template meant:",
            "",
            _fence(candidate_entry(cluster), "toml"),
        ]
    return "\n".join(parts) + "\n"
