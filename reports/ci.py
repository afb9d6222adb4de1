"""What a CI reads of a run: the sweep's exit status, a JUnit XML file, and the GitHub step summary."""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd

from reports.divergences import Verdict
from reports.expectations import Expectations, baseline_of, expectations_of
from reports.judgement import Judgement, judge_run
from reports.runs import Run
from reports.show import show_command

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
LINES_PER_FAILURE = 20


def sweep_judgement(run: Run, verdict: Verdict) -> Judgement:
    """A classified run judged against the baseline its stamp names (its parser's, for its profile)."""
    return judge_run(run, verdict, baseline_of(run.stamp))


def verdict_lines(run: Run, judgement: Judgement, shown: int = 10) -> list[str]:
    """The sweep's last words: the verdict, and on a FAIL the first failing rows and how to see them."""
    expectations = expectations_of(run.stamp)
    lines = [*judgement.lines(), f"  expectations: {expectations.describe()}"]
    failures = judgement.failures
    if not judgement.baseline and len(failures):
        lines.append(first_baseline_hint(run, expectations))
    if len(failures):
        lines.append(f"failing rows ({len(failures):,}), each with the command that shows it:")
        lines += [f"  {row['template']} {row['mode']} {failure_line(row, run)}" for _, row in failures.head(shown).iterrows()]
        if len(failures) > shown:
            lines.append(f"  …and {len(failures) - shown:,} more (failures.csv, report.html)")
    return lines


def first_baseline_hint(run: Run, expectations: Expectations) -> str:
    """What to do after a first sweep with no baseline: record one, then sweep against it."""
    directory = expectations.directory or Path("EXPECTATIONS")
    baseline = expectations.baseline(str(run.stamp.get("profile") or "")) or directory / "baseline"
    return (
        f"  next: fix the failing rows, or record them as the parser's baseline "
        f"(`chatparity gate --update --baseline {baseline} {run.directory}`) and sweep again with "
        f"`--expectations {directory}` (docs/reports.md#reports-diff-and-gate)"
    )


def exit_status(judgement: Judgement) -> int:
    """0 when the run passes against its baseline, else 1."""
    return 0 if judgement.passed else 1


def failure_line(row: pd.Series, run: Run) -> str:
    """One failing row: chunking, shape, how it fails against the baseline, its detail and its show command."""
    base = f" (baseline: {row['base']})" if isinstance(row["base"], str) else ""
    return (
        f"{row['chunking']} {row['shape']}: {row['change']}: {row['head']}{base}: {row['detail']} "
        f"[{show_command(str(row['case_id']), run.directory)}]"
    )


def junit_xml(run: Run, judgement: Judgement) -> str:
    """One test case per session: a failure lists its rows that fail the run; unsupported is skipped."""
    beyond = judgement.failures
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
                case, "failure", message=f"{len(failing)} rows fail against the parser's expectations"
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
    root = ElementTree.Element("testsuites", {key: str(value) for key, value in counts.items()})
    root.append(suite)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, run: Run, judgement: Judgement) -> Path:
    """Write the JUnit XML of a run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(run, judgement), encoding="utf-8")
    return path


def append_step_summary(markdown: str) -> Path | None:
    """Append the markdown to $GITHUB_STEP_SUMMARY when it is set; the file written, if any."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as summary:
        summary.write(markdown.rstrip("\n") + "\n")
    return Path(target)
