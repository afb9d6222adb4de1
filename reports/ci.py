"""What a CI reads of a run: the sweep's exit status, a JUnit XML file, and the GitHub step summary."""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd

from reports.divergences import Verdict
from reports.expectations import baseline_of, beyond, expectations_of
from reports.gate import read_baseline
from reports.runs import Run
from reports.show import show_command

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
LINES_PER_FAILURE = 20


def rows_beyond(run: Run, verdict: Verdict) -> pd.DataFrame:
    """The rows of a classified run that fail beyond its parser's expectations (known divergences applied,
    then the baseline the run's stamp names)."""
    outcomes = pd.DataFrame(columns=["case_id", "chunking", "outcome"])
    directory = baseline_of(run.stamp)
    if directory is not None:
        outcomes = read_baseline(directory).outcomes
    return beyond(verdict.rows, outcomes)


def verdict_lines(run: Run, beyond: pd.DataFrame, shown: int = 10) -> list[str]:
    """The sweep's last words: PASS, or FAIL with the first rows beyond expectations and how to see them."""
    where = expectations_of(run.stamp).describe()
    if not len(beyond) and not run.lost:
        return [f"PASS: no row fails beyond the parser's expectations (expectations: {where})"]
    lines = [
        f"FAIL: {len(beyond)} rows fail beyond the parser's expectations (expectations: {where})"
        + (f"; {len(run.lost)} sweep items lost" if run.lost else "")
    ]
    lines += [
        f"  {row['template']} {row['mode']} {failure_line(row, run)}"
        for _, row in beyond.head(shown).iterrows()
    ]
    if len(beyond) > shown:
        lines.append(f"  …and {len(beyond) - shown} more (failures.csv, report.html)")
    return lines


def exit_status(run: Run, beyond: pd.DataFrame) -> int:
    """1 when a row fails beyond the parser's expectations or a sweep item was lost, else 0."""
    return 1 if len(beyond) or run.lost else 0


def failure_line(row: pd.Series, run: Run) -> str:
    """One failing row: chunking, label, expected label, detail and the command that shows it."""
    expected = f" (expected {row['expected']})" if row["expected"] else ""
    detail = row["detail"] or row["error"] or row["stream_detail"]
    return (
        f"{row['chunking']} {row['shape']}: {row['label']}{expected}: {detail} "
        f"[{show_command(str(row['case_id']), run.directory)}]"
    )


def junit_xml(run: Run, beyond: pd.DataFrame) -> str:
    """One test case per session: a failure lists its rows beyond expectations; unsupported is skipped."""
    suite = ElementTree.Element("testsuite", name=f"chatparity {run.name}")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    by_session = (
        {key: group for key, group in beyond.groupby("session_id", sort=False)} if len(beyond) else {}
    )
    sessions = run.sessions.sort_values(["template", "mode", "conversation", "session_id"], kind="stable")
    for session in sessions.itertuples():
        case = ElementTree.SubElement(
            suite, "testcase", classname=str(session.template), name=f"{session.mode}|{session.conversation}"
        )
        counts["tests"] += 1
        failing = by_session.get(session.session_id)
        if session.status == "unsupported":
            ElementTree.SubElement(case, "skipped", message=f"the parser declines: {session.error}"[:500])
            counts["skipped"] += 1
        elif session.status == "oracle_error":
            ElementTree.SubElement(case, "error", message=f"llama.cpp cannot render: {session.error}"[:500])
            counts["errors"] += 1
        elif session.status == "render_failed":
            ElementTree.SubElement(case, "skipped", message=f"render failure: {session.error}"[:500])
            counts["skipped"] += 1
        elif failing is not None:
            lines = [failure_line(row, run) for _, row in failing.head(LINES_PER_FAILURE).iterrows()]
            if len(failing) > LINES_PER_FAILURE:
                lines.append(f"…and {len(failing) - LINES_PER_FAILURE} more rows")
            failure = ElementTree.SubElement(
                case, "failure", message=f"{len(failing)} rows fail beyond the parser's expectations"
            )
            failure.text = "\n".join(lines)
            counts["failures"] += 1
    for item in run.lost:
        case = ElementTree.SubElement(suite, "testcase", classname="chatparity.lost", name=item.split(":")[0])
        ElementTree.SubElement(case, "error", message=item[:500])
        counts["tests"] += 1
        counts["errors"] += 1
    for key, value in counts.items():
        suite.set(key, str(value))
    root = ElementTree.Element("testsuites", **{key: str(value) for key, value in counts.items()})
    root.append(suite)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, run: Run, beyond: pd.DataFrame) -> Path:
    """Write the JUnit XML of a run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(run, beyond), encoding="utf-8")
    return path


def append_step_summary(markdown: str) -> Path | None:
    """Append the markdown to $GITHUB_STEP_SUMMARY when it is set; the file written, if any."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as summary:
        summary.write(markdown.rstrip("\n") + "\n")
    return Path(target)
