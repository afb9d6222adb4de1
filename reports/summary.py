"""Short summaries of a run, the verdict first: one terminal screen for the end of a sweep, and markdown for CI or a
PR comment."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from reports.divergences import Verdict
from reports.groups import combinations, failure_groups
from reports.judgement import Judgement
from reports.runs import Run
from reports.show import show_command
from reports.statuses import (
    MISMATCH_KINDS,
    ORACLE_ERRORS,
    PARSER_ERRORS,
    STREAM_CHECKS,
    Status,
    stream_faults,
)
from reports.tables import markdown_table, rate

TOP = 8
WIDTH = 100
FAILING_GROUPS = (Status.MISMATCH, Status.PARSER_ERROR, Status.ORACLE_ERROR)
STREAM_COUNTED = ("outcome", "parity_breaks", "parity_explained", *STREAM_CHECKS)


@dataclass(frozen=True)
class Totals:
    """The headline counts of a run: rows by status (the parser's declined sessions apart), bugs by kind,
    errors, and its streams, each passing every check or failing one."""

    rows: int
    read: int
    by_status: dict[str, int]
    kinds: dict[str, int]
    oracle_errors: int
    parser_errors: int
    finished: tuple[int, int]
    partial: tuple[int, int]
    streamed: int
    streams_failing: int
    stream_faults: dict[str, int]


def totals(verdict: Verdict) -> Totals:
    """Count a classified run: match rates over the rows the parser reads (policies and llama.cpp defects count as
    rows that do not match); a streamed row fails when a check it breaks is the parser's fault."""
    rows = verdict.rows
    read = rows["status"] != Status.UNSUPPORTED.value
    matched = rows["status"] == Status.MATCH.value
    finished = rows["partial"] == 0
    bugs = rows.loc[rows["status"] == Status.MISMATCH.value, "kind"]
    streamed = (read & (rows["chunking"] != "whole") & rows["consistent"].notna()).to_numpy()
    codes, distinct = combinations(rows, [name for name in STREAM_COUNTED if name in rows.columns])
    per_distinct = np.bincount(codes[streamed], minlength=len(distinct))
    broken = stream_faults(distinct)
    faults = {check: int(per_distinct[mask.to_numpy()].sum()) for check, mask in broken.items()}
    any_fault = np.logical_or.reduce([mask.to_numpy() for mask in broken.values()])
    return Totals(
        rows=len(rows),
        read=int(read.sum()),
        by_status={status.value: int((rows["status"] == status.value).sum()) for status in Status},
        kinds={kind: int((bugs == kind).sum()) for kind in MISMATCH_KINDS},
        oracle_errors=int((read & rows["outcome"].isin(ORACLE_ERRORS)).sum()),
        parser_errors=int((read & rows["outcome"].isin(PARSER_ERRORS)).sum()),
        finished=(int((matched & finished).sum()), int((read & finished).sum())),
        partial=(int((matched & ~finished).sum()), int((read & ~finished).sum())),
        streamed=int(streamed.sum()),
        streams_failing=int(per_distinct[any_fault].sum()),
        stream_faults=faults,
    )


def rows_line(t: Totals) -> str:
    """The rows the parser reads, by label."""
    status = t.by_status
    kinds = ", ".join(f"{kind} {count:,}" for kind, count in t.kinds.items() if count)
    return (
        f"rows {t.read:,} read ({status['unsupported']:,} in sessions the parser declines left out): "
        f"match {rate(status['match'], t.read)}; parser policy {status['policy']:,}; "
        f"llama.cpp defect {status['llama.cpp defect']:,}; parser bug {status['mismatch']:,}"
        + (f" ({kinds})" if kinds else "")
        + f"; errors: parser {t.parser_errors:,}, llama.cpp {t.oracle_errors:,}"
    )


def streams_line(t: Totals) -> str:
    """The streamed rows: those passing every check and those failing one, which add up."""
    checks = ", ".join(f"{check.replace('_', ' ')} {t.stream_faults[check]:,}" for check in STREAM_CHECKS)
    return (
        f"streams: {t.streamed:,} streamed rows; {t.streamed - t.streams_failing:,} pass every check, "
        f"{t.streams_failing:,} fail one (by check, a row may break several: {checks})"
    )


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
        f"{group['rows']}× {group['family']}/{group['syntax']} shape {group['shapes']}: "
        f"{short(what)} (e.g. {group['template']} {group['mode']} {group['chunking']})"
    )


def short(text: str, width: int = 70) -> str:
    """Text cut to `width` characters with '…'."""
    return text if len(text) <= width else text[: width - 1] + "…"


def summary_text(run: Run, verdict: Verdict, judgement: Judgement, report: str = "", defects: str = "") -> str:
    """The one-screen terminal summary, the verdict first (`defects`: the line counting llama.cpp's own defects,
    apart from its crashes)."""
    t = totals(verdict)
    lines = [*judgement.lines(), f"chatparity run {run.name}: {stamp_line(run)}", rows_line(t), streams_line(t)]
    lines += [defects] if defects else []
    if verdict.stale or verdict.stale_policies or len(verdict.unexpected):
        lines.append(
            f"STRICT: {len(verdict.unexpected)} unexpected matches, {len(verdict.stale)} stale known divergences, "
            f"{len(verdict.stale_policies)} stale policies"
        )
    groups = failure_groups(verdict.rows, FAILING_GROUPS)
    if not groups.empty:
        lines.append(f"parser bugs and errors: {len(groups)} distinct (top {min(TOP, len(groups))})")
        lines += ["  " + group_line(group) for _, group in groups.head(TOP).iterrows()]
    if report:
        lines.append(f"report: {report}")
    return "\n".join(lines)


def verdict_markdown(judgement: Judgement) -> list[str]:
    """The verdict as markdown: PASS or FAIL in bold, then what accounts for the rows."""
    first, *rest = judgement.lines()
    return [f"**{first}**", "", *(f"- {line.strip()}" for line in rest)]


def summary_markdown(run: Run, verdict: Verdict, judgement: Judgement, report: str | None = None) -> str:
    """A markdown summary for a CI step summary or a PR comment, the verdict first."""
    t = totals(verdict)
    failures = judgement.failures.head(TOP)
    parts = [
        f"## chatparity: {run.name}",
        "",
        *verdict_markdown(judgement),
        "",
        stamp_line(run),
        "",
        f"- {rows_line(t)}",
        f"- {streams_line(t)}",
        "",
    ]
    if len(failures):
        shown = failures[["change", "template", "mode", "shape", "chunking", "head", "detail"]].assign(
            show=[f"`{show_command(case, run.directory)}`" for case in failures["case_id"]]
        )
        parts += [f"### Failing rows ({len(judgement.failures):,}; first {len(failures)})", "",
                  markdown_table(shown, WIDTH), ""]
    if report:
        parts += [f"Full report: {report}"]
    return "\n".join(parts) + "\n"
