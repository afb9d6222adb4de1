"""Writes every report file of a run: markdown, HTML, CSV and JSON tables, oracle defects and coverage."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from chatparity.files import fault, remove_stale, replacing, write_text
from chatparity.model import Row, columns
from harness.store import REPORTS_INCOMPLETE, mark_reports_complete, mark_reports_incomplete
from reports.coverage import Coverage, coverage, coverage_markdown
from reports.divergences import Verdict, classify_run
from reports.failures import write_failures
from reports.forked import both
from reports.groups import failure_groups
from reports.html import page
from reports.multiturn import multiturn_section
from reports.oracle_defects import defects_markdown, oracle_defects
from reports.runs import Run, load_run
from reports.summary import summary_markdown, summary_text
from reports.tables import Tables, build_tables, markdown_pieces, markdown_table, records

WIDTH = 100
STORE_ONLY = ("oracle_vs_truth", "parser_vs_truth", "truth", "tools", "conversation", "oracle_structure_detail")
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


def strict_section(verdict: Verdict) -> str:
    """Markdown of the known-divergence problems: unexpected matches, stale and unexercised entries."""
    unexpected = verdict.unexpected[["template", "mode", "shape", "chunking", "case_id", "divergence"]]
    stale = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.stale])
    idle = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.not_exercised])
    return "\n".join(
        [
            f"## Unexpected matches ({len(unexpected)}; each fails the gate)",
            "",
            markdown_table(unexpected),
            "",
            f"## Stale known divergences ({len(stale)}; each fails the gate)",
            "",
            markdown_table(stale),
            "",
            f"## Known divergences this run did not exercise ({len(idle)})",
            "",
            markdown_table(idle),
            "",
        ]
    )


def report_parts(run: Run, verdict: Verdict, tables: Tables, groups: pd.DataFrame) -> Iterator[str]:
    """The full markdown report's lines, a section at a time: summary, distinct failures, per family/syntax/
    template tables, strictness."""
    streams = verdict.stream_failures
    structures = verdict.structure_failures
    yield summary_markdown(run, verdict, "report.html")
    yield from multiturn_section(run.directory, str(run.stamp.get("parser", "")))
    yield from ["## All distinct failures", ""]
    yield from markdown_pieces(groups[GROUP_COLUMNS], WIDTH)
    yield from ["", f"## Stream check failures ({len(streams)} distinct)", ""]
    yield from markdown_pieces(streams[STREAM_COLUMNS], WIDTH)
    yield from ["", f"## Structural check failures of the parser's readings ({len(structures)} distinct)", ""]
    yield from markdown_pieces(structures[STRUCTURE_COLUMNS], WIDTH)
    yield ""
    for by, shown in tables.shown.items():
        for name, frame in shown.items():
            yield from [f"## Per {by}: {name}", "", markdown_table(frame), ""]
    yield strict_section(verdict)


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    """Write `lines` joined by newlines, each as soon as it is made."""
    with replacing(path) as partial, partial.open("w", encoding="utf-8") as file:
        for number, line in enumerate(lines):
            file.write(f"\n{line}" if number else line)
    return path


@dataclass(frozen=True)
class Published:
    """The report files written for a run, its one-screen terminal summary, and what the job run beside the
    writing returned (`publish`'s `beside`)."""

    files: list[Path]
    summary: str
    run: Run
    verdict: Verdict
    beside: Any = None


def publish(run_dir: Path, out: Path | None = None, divergences: Path | None = None,
            beside: Callable[[Run, Verdict], Any] | None = None) -> Published:
    """Load and classify the run in `run_dir` once; write its report files into `out` (default: the run
    directory) and return them with the terminal summary and what `beside(run, verdict)`, run while the files
    are written, returned."""
    run = load_run(Path(run_dir), REPORT_COLUMNS)
    verdict = classify_run(run, divergences)
    target = Path(out) if out is not None else run.directory
    try:
        target.mkdir(parents=True, exist_ok=True)
        mark_reports_incomplete(target)
        files, besides = write_files(run, verdict, target, beside)
        mark_reports_complete(target)
    except OSError as error:
        raise fault(target, error, f"the report files there are marked incomplete ({REPORTS_INCOMPLETE}): free "
                    f"space or make the directory writable, then `chatparity report {run.directory}`") from None
    return Published(files, summary_text(run, verdict, target / "report.md"), run, verdict, besides)


def write_files(run: Run, verdict: Verdict, target: Path,
                beside: Callable[[Run, Verdict], Any] | None = None) -> tuple[list[Path], Any]:
    """Write all report files of a classified run into `target`; return them and what `beside(run, verdict)`
    returned. A forked child writes the HTML page, the JSON tables, failures.csv and the coverage files while
    this process writes the markdown and the other CSV tables, then runs `beside`, whose error is raised once
    every file is written."""
    tables = build_tables(verdict.rows)
    groups = failure_groups(verdict.rows)

    def here() -> tuple[list[Path], Any, Exception | None]:
        """This process's share: the markdown and CSV tables, then `beside` (its result or its error)."""
        written = write_text_files(run, verdict, tables, groups, target)
        try:
            return written, beside(run, verdict) if beside is not None else None, None
        except Exception as error:  # noqa: BLE001 - raised once the child's files are written too
            return written, None, error

    try:
        (text_files, besides, error), page_files = both(
            here, lambda: write_page_files(run, verdict, tables, groups, target)
        )
    finally:
        remove_stale(target)
    if error is not None:
        raise error
    return text_files + page_files, besides


def write_text_files(run: Run, verdict: Verdict, tables: Tables, groups: pd.DataFrame,
                     target: Path) -> list[Path]:
    """Write report.md, summary.md and the count, group, stream and structure CSV tables; return them."""
    written = [target / "report.md", target / "summary.md"]
    write_lines(written[0], report_parts(run, verdict, tables, groups))
    write_text(written[1], summary_markdown(run, verdict, "report.html"))
    for by, counts in tables.counts.items():
        written.append(write_csv(target / f"counts_by_{by}.csv", counts))
    written.append(write_csv(target / "failure_groups.csv", groups))
    written.append(write_csv(target / "stream_failures.csv", verdict.stream_failures))
    written.append(write_csv(target / "structure_failures.csv", verdict.structure_failures))
    return written


def write_page_files(run: Run, verdict: Verdict, tables: Tables, groups: pd.DataFrame,
                     target: Path) -> list[Path]:
    """Write report.html, tables.json, the oracle defect files, failures.csv and the coverage files; return
    them."""
    defects = oracle_defects(run)
    html = target / "report.html"
    write_text(html, page(run, verdict, tables, defects))
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
                "unexpected_matches": records(
                    verdict.unexpected[["case_id", "chunking", "template", "divergence"]]
                ),
                "stale_divergences": [entry.label for entry in verdict.stale],
                "unexercised_divergences": [entry.label for entry in verdict.not_exercised],
            },
        )
    )
    defects_md = target / "oracle_defects.md"
    write_text(defects_md, defects_markdown(defects, run))
    written.append(defects_md)
    written.append(
        write_json(
            target / "oracle_defects.json",
            {"counts": records(defects.counts), "clusters": records(defects.clusters)},
        )
    )
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
