"""Writes every report file of a run: markdown, HTML, CSV and JSON tables, oracle defects and coverage."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from chatparity.files import fault, remove_stale, replacing, write_text
from chatparity.model import Row, columns
from harness.store import REPORTS_INCOMPLETE, mark_reports_complete, mark_reports_incomplete
from reports.ci import sweep_judgement
from reports.coverage import Coverage, coverage, coverage_markdown
from reports.defects_markdown import defects_markdown
from reports.divergences import Verdict, classify_run
from reports.expectations import expectations_of
from reports.failures import write_failures
from reports.forked import both
from reports.groups import failure_groups
from reports.html import page
from reports.judgement import Judgement
from reports.multiturn import multiturn_section
from reports.not_written import not_written_section
from reports.oracle_defects import oracle_defects, summary_line
from reports.runs import Run, load_run
from reports.show import show_command
from reports.summary import summary_markdown, summary_text
from reports.tables import Tables, build_tables, markdown_table, records

WIDTH = 100
STORE_ONLY = (
    "oracle_vs_truth", "parser_vs_truth", "truth", "tools", "conversation", "oracle_structure_detail", "oracle_stream",
    "oracle_grammar",
)
"""The row columns the reports do not read from the loaded rows (oracle_defects reads its rows from the store)."""
REPORT_COLUMNS = [name for name in columns(Row) if name not in STORE_ONLY]
STREAM_COLUMNS = [
    "rows",
    "family",
    "syntax",
    "shapes",
    "what",
    "templates",
    "cases",
    "template",
    "mode",
    "chunking",
    "case_id",
    "stream_detail",
]
STRUCTURE_COLUMNS = [
    "rows",
    "family",
    "syntax",
    "shapes",
    "what",
    "llama.cpp too",
    "templates",
    "cases",
    "template",
    "mode",
    "chunking",
    "case_id",
    "structure_detail",
]
GROUP_COLUMNS = [
    "rows",
    "status",
    "family",
    "syntax",
    "shapes",
    "kind",
    "what",
    "templates",
    "cases",
    "template",
    "mode",
    "chunking",
    "case_id",
    "detail",
]


def write_json(path: Path, value: Any) -> Path:
    """Write deterministic JSON (whole or not at all, as every report file)."""
    return write_text(path, json.dumps(value, indent=1, ensure_ascii=False) + "\n")


def write_csv(path: Path, frame: pd.DataFrame) -> Path:
    """Write a frame as CSV without its index."""
    with replacing(path) as partial:
        frame.to_csv(partial, index=False, lineterminator="\n")
    return path


TOP = 15
DATA_FILES = (
    "report.html (every section, examples with both readings field by field)",
    "failures.csv (every row that differs or fails, with its label and show command)",
    "failure_groups.csv, stream_failures.csv, structure_failures.csv (rows that differ alike, folded)",
    "counts_by_family.csv, counts_by_syntax.csv, counts_by_template.csv and tables.json (every count)",
    "oracle_defects.md (what llama.cpp itself gets wrong), coverage.md (per template)",
)


def strict_section(verdict: Verdict) -> str:
    """Markdown of the expectations that no longer hold: unexpected matches, stale entries and policies, and
    those the run did not exercise."""
    unexpected = verdict.unexpected[["template", "mode", "shape", "chunking", "case_id", "explained"]]
    stale = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.stale]
                         + [{"entry": f"policy {policy.name}", "reason": policy.reason}
                            for policy in verdict.stale_policies])
    idle = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.not_exercised]
                        + [{"entry": f"policy {policy.name}", "reason": policy.reason}
                           for policy in verdict.idle_policies])
    return "\n".join(
        [
            f"## Unexpected matches ({len(unexpected)}; each fails the gate)",
            "",
            markdown_table(unexpected.head(TOP), WIDTH),
            "",
            f"## Stale known divergences and policies ({len(stale)}; each fails the gate)",
            "",
            markdown_table(stale, WIDTH),
            "",
            f"## Known divergences and policies this run did not exercise ({len(idle)})",
            "",
            markdown_table(idle, WIDTH),
            "",
        ]
    )


def policies_markdown(run: Run, judgement: Judgement) -> list[str]:
    """The parser's policies with the rows and snapshots each accounts for, and the llama.cpp defects."""
    policies = expectations_of(run.stamp).policies.policies
    table = pd.DataFrame(
        [{"policy": policy.name, "rows": judgement.policy_rows[policy.name],
          "snapshots": judgement.policy_snapshots[policy.name], "documented": policy.documented,
          "reason": policy.reason} for policy in policies],
        columns=["policy", "rows", "snapshots", "documented", "reason"],
    )
    defects = sorted(set(judgement.defect_rows) | set(judgement.defect_snapshots))
    defect_table = pd.DataFrame(
        [{"llama.cpp defect": name, "whole readings": judgement.defect_rows[name],
          "stream snapshots": judgement.defect_snapshots[name]} for name in defects],
        columns=["llama.cpp defect", "whole readings", "stream snapshots"],
    )
    return [
        "## The parser's policies", "", markdown_table(table, 160), "",
        "## llama.cpp defects (never blamed on the parser; oracle_defects.md has what llama.cpp gets wrong)", "",
        markdown_table(defect_table), "",
    ]


def report_parts(run: Run, verdict: Verdict, judgement: Judgement, tables: Tables,
                 groups: pd.DataFrame) -> Iterator[str]:
    """The markdown report, a page a person reads: the summary and verdict, the policies and defects, the tables
    per syntax, the top differences, the strictness of the expectations, and where the full data is."""
    yield summary_markdown(run, verdict, judgement, "report.html")
    yield from multiturn_section(run.directory, run.parser_spec)
    yield from policies_markdown(run, judgement)
    yield from not_written_section(run.rows)
    for name, frame in tables.shown["syntax"].items():
        yield from [f"## Per syntax: {name}", "", markdown_table(frame), ""]
    top = groups.head(TOP).assign(show=[f"`{show_command(case, run.directory)}`" for case in groups.head(TOP)["case_id"]])
    yield from [f"## Top differences ({len(groups):,} distinct; all in failure_groups.csv and report.html)", "",
                markdown_table(top[["rows", "status", "syntax", "shapes", "kind", "what", "template", "chunking",
                                    "show"]], WIDTH), ""]
    streams = verdict.stream_failures.head(TOP)
    yield from [f"## Top stream check failures ({len(verdict.stream_failures):,} distinct)", "",
                markdown_table(streams[STREAM_COLUMNS[:10]], WIDTH), ""]
    yield strict_section(verdict)
    yield from ["## The full data", "", *(f"- {line}" for line in DATA_FILES), ""]


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    """Write `lines` joined by newlines, each as soon as it is made."""
    with replacing(path) as partial, partial.open("w", encoding="utf-8") as file:
        for number, line in enumerate(lines):
            file.write(f"\n{line}" if number else line)
    return path


@dataclass(frozen=True)
class Published:
    """The report files written for a run, its one-screen terminal summary, the classified run and its
    judgement against the parser's baseline."""

    files: list[Path]
    summary: str
    run: Run
    verdict: Verdict
    judgement: Judgement


def publish(run_dir: Path, out: Path | None = None) -> Published:
    """Load, classify and judge the run in `run_dir` once; write its report files into `out` (default: the run
    directory) and return them with the terminal summary."""
    run = load_run(Path(run_dir), REPORT_COLUMNS)
    verdict = classify_run(run)
    judgement = sweep_judgement(run, verdict)
    target = Path(out) if out is not None else run.directory
    try:
        target.mkdir(parents=True, exist_ok=True)
        mark_reports_incomplete(target)
        files = write_files(run, verdict, judgement, target)
        mark_reports_complete(target)
    except OSError as error:
        raise fault(target, error, f"the report files there are marked incomplete ({REPORTS_INCOMPLETE}): free "
                    f"space or make the directory writable, then `chatparity report {run.directory}`") from None
    defects = json.loads((target / "oracle_defects.json").read_text(encoding="utf-8"))["summary"]
    summary = summary_text(run, verdict, judgement, str(target / "report.md"), summary_line(defects))
    return Published(files, summary, run, verdict, judgement)


def write_files(run: Run, verdict: Verdict, judgement: Judgement, target: Path) -> list[Path]:
    """Write all report files of a judged run into `target` and return them: a forked child writes the HTML
    page, the JSON tables, failures.csv and the coverage files while this process writes the markdown and the
    other CSV tables."""
    tables = build_tables(verdict.rows)
    groups = failure_groups(verdict.rows)
    try:
        text_files, page_files = both(
            lambda: write_text_files(run, verdict, judgement, tables, groups, target),
            lambda: write_page_files(run, verdict, judgement, tables, groups, target),
        )
    finally:
        remove_stale(target)
    return text_files + page_files


def write_text_files(run: Run, verdict: Verdict, judgement: Judgement, tables: Tables, groups: pd.DataFrame,
                     target: Path) -> list[Path]:
    """Write report.md, summary.md and the count, group, stream and structure CSV tables; return them."""
    written = [target / "report.md", target / "summary.md"]
    write_lines(written[0], report_parts(run, verdict, judgement, tables, groups))
    write_text(written[1], summary_markdown(run, verdict, judgement, "report.html"))
    for by, counts in tables.counts.items():
        written.append(write_csv(target / f"counts_by_{by}.csv", counts))
    written.append(write_csv(target / "failure_groups.csv", groups))
    written.append(write_csv(target / "stream_failures.csv", verdict.stream_failures))
    written.append(write_csv(target / "structure_failures.csv", verdict.structure_failures))
    return written


def write_page_files(run: Run, verdict: Verdict, judgement: Judgement, tables: Tables, groups: pd.DataFrame,
                     target: Path) -> list[Path]:
    """Write report.html, tables.json, the oracle defect files, failures.csv and the coverage files; return
    them."""
    defects = oracle_defects(run)
    html = target / "report.html"
    policies = expectations_of(run.stamp).policies
    write_text(html, page(run, verdict, judgement, tables, defects, policies))
    written = [html]
    written.append(
        write_json(
            target / "tables.json",
            {
                "stamp": run.stamp,
                "counts": {by: records(counts) for by, counts in tables.counts.items()},
                "tables": {
                    by: {name: records(frame) for name, frame in shown.items()}
                    for by, shown in tables.shown.items()
                },
                "failures": records(groups[GROUP_COLUMNS]),
                "stream_failures": records(verdict.stream_failures[STREAM_COLUMNS]),
                "structure_failures": records(verdict.structure_failures[STRUCTURE_COLUMNS]),
                "verdict": judgement.lines(),
                "policies": {"rows": dict(judgement.policy_rows), "snapshots": dict(judgement.policy_snapshots)},
                "llama_cpp_defects": {"rows": dict(judgement.defect_rows),
                                      "snapshots": dict(judgement.defect_snapshots)},
                "unexpected_matches": records(
                    verdict.unexpected[["case_id", "chunking", "template", "explained"]]
                ),
                "stale_divergences": [entry.label for entry in verdict.stale],
                "stale_policies": [policy.name for policy in verdict.stale_policies],
                "unexercised_divergences": [entry.label for entry in verdict.not_exercised],
            },
        )
    )
    defects_md = target / "oracle_defects.md"
    write_text(defects_md, defects_markdown(defects, run))
    written.append(defects_md)
    written.append(write_json(target / "oracle_defects.json", defects.to_json()))
    written.append(write_failures(target / "failures.csv", verdict.rows, run.directory))
    return written + write_coverage(coverage(run, verdict.rows), target)


def write_coverage(covered: Coverage, target: Path) -> list[Path]:
    """Write coverage.md, coverage.csv (per template), coverage_families.csv and coverage.json."""
    target.mkdir(parents=True, exist_ok=True)
    markdown = target / "coverage.md"
    write_text(markdown, coverage_markdown(covered))
    return [
        markdown,
        write_csv(target / "coverage.csv", covered.templates),
        write_csv(target / "coverage_families.csv", covered.families),
        write_json(
            target / "coverage.json",
            {
                "templates": records(covered.templates),
                "families": records(covered.families),
                "unsupported": records(covered.unsupported),
                "not_run": records(covered.not_run),
                "no_calls_read": records(covered.no_calls_read),
            },
        ),
    ]
