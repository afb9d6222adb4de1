"""`chatparity sweep`: the harness runs the sweep and stores its rows; the reports publish and judge the run."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from harness import sweep_command

JUNIT_IN_PYTEST_ARGS = re.compile(r"--junit-?xml[= ](\S+)")


def junit_target(junitxml: Path | None, pytest_args: str) -> Path | None:
    """Where the JUnit XML goes: --junitxml, else a --junitxml passed in --pytest-args (written over)."""
    found = JUNIT_IN_PYTEST_ARGS.search(pytest_args)
    return junitxml or (Path(found.group(1)) if found else None)


def load_reports() -> None:
    """Import the report modules (pandas among them), which only publishing needs: the sweep does it while its
    workers start, so they start without waiting for it and the publishing does not wait for it either."""
    importlib.import_module("reports.ci")
    importlib.import_module("reports.publish")


def main(argv: list[str], prog: str = "chatparity sweep") -> int:
    """Run the sweep, write its reports, print the summary; exit 1 when a row fails beyond expectations."""
    options = sweep_command.arguments(prog).parse_args(argv)
    statuses: list[int] = []

    def summary_of(run: Path) -> str:
        """Write the run's report files, JUnit XML and step summary; return the summary with the verdict."""
        from reports.ci import append_step_summary, exit_status, rows_beyond, verdict_lines, write_junit
        from reports.divergences import DivergenceFileError
        from reports.gate import BaselineError
        from reports.publish import publish

        try:
            published = publish(run, beside=rows_beyond)
            beyond = published.beside
        except (BaselineError, DivergenceFileError) as error:
            statuses.append(2)
            return f"{prog}: the run is stored, but its expectations cannot be read: {error}"
        target = junit_target(options.junitxml, options.pytest_args)
        if target is not None:
            write_junit(target, published.run, beyond)
        verdict = verdict_lines(published.run, beyond)
        summary = (published.run.directory / "summary.md").read_text(encoding="utf-8")
        append_step_summary("\n".join([summary, f"**{verdict[0]}**", ""]))
        statuses.append(exit_status(published.run, beyond))
        return "\n".join([published.summary, *verdict])

    status = sweep_command.main(argv, prog, publish=summary_of, prepare=load_reports)
    if statuses and status in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return max(int(status), statuses[0])
    return status
