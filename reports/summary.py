"""Short summaries of a run: one terminal screen for the end of a sweep, and markdown for CI or a PR."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from reports.divergences import Verdict, classify_run
from reports.expectations import broken_checks
from reports.groups import combinations, failure_groups
from reports.runs import Run, load_run
from reports.show import show_command
from reports.statuses import (
    MISMATCH_KINDS,
    ORACLE_ERRORS,
    PARSER_ERRORS,
    STREAM_CHECKS,
    STRUCTURAL_CHECKS,
    Status,
)
from reports.tables import markdown_table, rate

CHECK_COLUMNS = (
    "outcome",
    *STREAM_CHECKS,
    *STRUCTURAL_CHECKS,
    *(f"oracle_{check}" for check in STRUCTURAL_CHECKS),
)

TOP = 8
WIDTH = 100


@dataclass(frozen=True)
class Totals:
    """The headline counts of a run."""

    rows: int
    supported: int
    by_status: dict[str, int]
    kinds: dict[str, int]
    oracle_errors: int
    parser_errors: int
    finished: tuple[int, int]
    partial: tuple[int, int]
    streamed: int
    stream_passes: dict[str, int]
    stream_faults: dict[str, int]
    stream_failing: int
    stale: int


@lru_cache(maxsize=1)
def totals(verdict: Verdict) -> Totals:
    """Count a classified run (the last verdict's counts are kept: its reports ask for them several times)."""
    rows = verdict.rows
    checked = [name for name in CHECK_COLUMNS if name in rows.columns]
    read = rows["status"] != Status.UNSUPPORTED.value
    is_match = rows["status"] == Status.MATCH.value
    judged = read & (rows["status"] != Status.KNOWN.value)
    finished = rows["partial"] == 0
    mismatched = rows.loc[rows["status"] == Status.MISMATCH.value, "kind"]
    streamed = (read & (rows["chunking"] != "whole") & rows["consistent"].notna()).to_numpy()
    codes, distinct = combinations(rows, checked)
    streams = np.bincount(codes[streamed], minlength=len(distinct))
    faults = [broken_checks(row) for row in distinct.itertuples()]
    return Totals(
        rows=len(rows),
        supported=int(read.sum()),
        by_status={status.value: int((rows["status"] == status.value).sum()) for status in Status},
        kinds={kind: int((mismatched == kind).sum()) for kind in MISMATCH_KINDS},
        oracle_errors=int((read & rows["outcome"].isin(ORACLE_ERRORS)).sum()),
        parser_errors=int((read & rows["outcome"].isin(PARSER_ERRORS)).sum()),
        finished=(int((is_match & finished).sum()), int((judged & finished).sum())),
        partial=(int((is_match & ~finished).sum()), int((judged & ~finished).sum())),
        streamed=int(streamed.sum()),
        stream_passes={check: int((streamed & (rows[check] == 1).to_numpy()).sum()) for check in STREAM_CHECKS},
        stream_faults={
            check: int(sum(count for count, broken in zip(streams, faults) if check in broken))
            for check in STREAM_CHECKS
        },
        stream_failing=int(sum(count for count, broken in zip(streams, faults) if broken)),
        stale=len(verdict.stale),
    )


def headline(t: Totals) -> str:
    """The run in one sentence: match rate over the rows the parser reads, known divergences apart."""
    status = t.by_status
    judged = t.supported - status[Status.KNOWN.value]
    return (
        f"{t.rows} rows; {status['unsupported']} unsupported (sessions the parser declines) are left out; of "
        f"the {t.supported} read: match {rate(status['match'], judged)} of those not known to diverge; "
        f"new mismatches {status['mismatch']}; known divergences {status[Status.KNOWN.value]}; "
        f"unexpected matches {status[Status.UNEXPECTED_MATCH.value]}; parser errors {t.parser_errors}; "
        f"oracle errors {t.oracle_errors}; finished {rate(*t.finished)}, partial {rate(*t.partial)}; "
        f"{stream_faults(t)}"
    )


def stream_faults(t: Totals) -> str:
    """The streamed rows that break a check against the parser (their snapshots or final reading depart from
    llama.cpp's), by check."""
    checks = ", ".join(f"{check.replace('_', ' ')} {t.stream_faults[check]}" for check in STREAM_CHECKS)
    return f"streams failing {t.stream_failing} of {t.streamed} ({checks})"


def worst_templates(rows: pd.DataFrame, count: int = 5) -> list[str]:
    """The templates the parser reads with the lowest match rate (then most rows), as 'name m/t (p%)'.

    Unsupported rows and known divergences are left out of both counts.
    """
    judged = rows.loc[~rows["status"].isin([Status.UNSUPPORTED.value, Status.KNOWN.value]), ["status", "template"]]
    per = (
        judged.assign(is_match=judged["status"] == Status.MATCH.value)
        .groupby("template")["is_match"]
        .agg(["sum", "size"])
    )
    per = per[per["sum"] < per["size"]]
    per = per.assign(share=per["sum"] / per["size"]).sort_values(["share", "size"], ascending=[True, False])
    return [f"{name} {rate(int(row['sum']), int(row['size']))}" for name, row in per.head(count).iterrows()]


def stamp_line(run: Run) -> str:
    """Which parser, against which llama.cpp, at which profile."""
    stamp = run.stamp
    return (
        f"parser {stamp.get('parser', '?')}@{stamp.get('parser_revision', '?')} vs llama.cpp "
        f"{str(stamp.get('llama_cpp_commit', '?'))[:12]} "
        f"(llama-cpp-python {stamp.get('llama_cpp_python_version', '?')}, "
        f"profile {stamp.get('profile', '?')})"
    )


def group_line(group: pd.Series) -> str:
    """One failure group as a single line."""
    what = f"{group['kind']} @ {group['what']}" if group["kind"] else group["what"]
    return (
        f"{group['rows']}× {group['status']} {group['family']}/{group['syntax']} shape {group['shapes']}: "
        f"{short(what)} (e.g. {group['template']} {group['mode']} {group['chunking']})"
    )


def short(text: str, width: int = 70) -> str:
    """Text cut to `width` characters with '…'."""
    return text if len(text) <= width else text[: width - 1] + "…"


def summary_text(run: Run, verdict: Verdict, report: Path | None = None, defects: str = "") -> str:
    """The one-screen terminal summary (`defects`: the line counting llama.cpp's defects, apart from its
    crashes)."""
    t = totals(verdict)
    status = t.by_status
    kinds = ", ".join(f"{kind} {count}" for kind, count in t.kinds.items() if count) or "none"
    checks = ", ".join(f"{check.replace('_', ' ')} {t.stream_passes[check]}" for check in STREAM_CHECKS)
    groups = failure_groups(verdict.rows, (Status.MISMATCH, Status.PARSER_ERROR, Status.ORACLE_ERROR))
    lines = [
        f"chatparity run {run.name}: {stamp_line(run)}",
        (
            f"rows {t.supported} read ({status['unsupported']} unsupported left out): match "
            f"{rate(status['match'], t.supported - status['known divergence'])}; "
            f"finished {rate(*t.finished)}, partial {rate(*t.partial)}"
        ),
        f"new mismatches {status['mismatch']} ({kinds}); known divergences {status['known divergence']}",
        f"errors: oracle {t.oracle_errors}, parser {t.parser_errors}",
        *([defects] if defects else []),
        f"streams: {t.streamed} streamed; passing {checks}",
        stream_faults(t),
    ]
    if run.lost:
        lines.append(
            f"LOST: {len(run.lost)} sweep items failed and their rows are missing, e.g. {run.lost[0]}"
        )
    if t.by_status["unexpected match"] or t.stale:
        lines.append(
            f"STRICT: {t.by_status['unexpected match']} unexpected matches, {t.stale} stale divergences"
        )
    worst = worst_templates(verdict.rows)
    if worst:
        lines.append("worst templates: " + "; ".join(worst))
    if not groups.empty:
        lines.append(f"distinct failures: {len(groups)} (top {min(TOP, len(groups))})")
        lines += ["  " + group_line(group) for _, group in groups.head(TOP).iterrows()]
    streams = verdict.stream_failures
    if not streams.empty:
        lines.append(f"distinct stream failures: {len(streams)} (top {min(TOP // 2, len(streams))})")
        lines += [
            f"  {group['rows']}× {group['family']}/{group['syntax']} shape {group['shapes']}: "
            f"{short(group['what'])} (e.g. {group['template']} {group['mode']} {group['chunking']})"
            for _, group in streams.head(TOP // 2).iterrows()
        ]
    if report is not None:
        lines.append(f"report: {report}")
    return "\n".join(lines)


def summary_markdown(run: Run, verdict: Verdict, report: str | None = None) -> str:
    """A markdown summary for a CI step summary or a PR comment."""
    t = totals(verdict)
    status = t.by_status
    headline = pd.DataFrame(
        [
            {
                "rows read": t.supported,
                "match": rate(status["match"], t.supported - status["known divergence"]),
                "finished": rate(*t.finished),
                "partial": rate(*t.partial),
                "new mismatches": status["mismatch"],
                "known": status["known divergence"],
                "unexpected match": status["unexpected match"],
                "stale entries": t.stale,
                "oracle errors": t.oracle_errors,
                "parser errors": t.parser_errors,
                "streams failing": stream_faults(t).removeprefix("streams failing "),
                "unsupported": status["unsupported"],
            }
        ]
    )
    kinds = pd.DataFrame([t.kinds])
    groups = failure_groups(verdict.rows, (Status.MISMATCH, Status.PARSER_ERROR, Status.ORACLE_ERROR))
    shown = groups.head(TOP)[["rows", "status", "syntax", "shapes", "kind", "what", "template", "mode", "chunking"]]
    shown = shown.assign(show=[f"`{show_command(case, run.directory)}`" for case in groups.head(TOP)["case_id"]])
    lost = (
        [f"> **{len(run.lost)} sweep items failed; their rows are missing** (e.g. `{run.lost[0]}`)", ""]
        if run.lost
        else []
    )
    parts = [
        f"## chatparity: {run.name}",
        "",
        stamp_line(run),
        "",
        *lost,
        markdown_table(headline),
        "",
        "Mismatches by kind:",
        "",
        markdown_table(kinds),
        "",
        f"### Distinct failures ({len(groups)})",
        "",
        markdown_table(shown, WIDTH),
    ]
    if len(groups) > TOP:
        parts += ["", f"…and {len(groups) - TOP} others."]
    streams = verdict.stream_failures
    parts += [
        "",
        f"### Stream check failures ({len(streams)} distinct)",
        "",
        markdown_table(
            streams.head(TOP)[["rows", "family", "syntax", "shapes", "what", "template", "mode", "chunking"]],
            WIDTH,
        ),
    ]
    if len(streams) > TOP:
        parts += ["", f"…and {len(streams) - TOP} others."]
    if report:
        parts += ["", f"Full report: {report}"]
    return "\n".join(parts) + "\n"


def classify(run_dir: Path, divergences: Path | None = None) -> tuple[Run, Verdict]:
    """Load a run and apply the known divergences to it."""
    run = load_run(Path(run_dir))
    return run, classify_run(run, divergences)


def summarize(run_dir: Path, divergences: Path | None = None) -> str:
    """The one-screen terminal summary of the run in `run_dir` (for the end of a sweep)."""
    run, verdict = classify(run_dir, divergences)
    report = run.directory / "report.md"
    return summary_text(run, verdict, report if report.exists() else None)
