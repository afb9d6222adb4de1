"""`chatparity sweep`: the harness runs the sweep and stores its rows; the reports publish and judge the run."""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

from harness import sweep_command
from harness.parser_specs import expectations_directory, expectations_path, parser_spec
from reports.expectations import Expectations

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


def progress_against_baseline(options: argparse.Namespace) -> object:
    """The plugin showing each session's progress letter against the parser's baseline for the profile (none
    when the flags name no parser with expectations; the sweep reports wrong flags itself)."""
    from reports.progress import BaselineProgress

    try:
        declared = expectations_directory(parser_spec(options.parser), options.expectations)
    except ValueError:
        return BaselineProgress(None)
    return BaselineProgress(Expectations(expectations_path(declared)).baseline(options.profile))


def main(argv: list[str], prog: str = "chatparity sweep") -> int:
    """Run the sweep, write its reports, print the summary; exit 1 when a row fails beyond expectations."""
    options = sweep_command.arguments(prog).parse_args(argv)
    statuses: list[int] = []

    def summary_of(run: Path) -> str:
        """Write the run's report files, JUnit XML and step summary; return the summary with the verdict."""
        from harness.known_divergences import DivergenceFileError
        from harness.policies import PolicyFileError
        from reports.baselines import BaselineError
        from reports.ci import append_step_summary, exit_status, verdict_lines, write_junit
        from reports.publish import publish

        try:
            published = publish(run)
        except (BaselineError, DivergenceFileError, PolicyFileError) as error:
            statuses.append(2)
            return f"{prog}: the run is stored, but its expectations cannot be read: {error}"
        judgement = published.judgement
        target = junit_target(options.junitxml, options.pytest_args)
        if target is not None:
            write_junit(target, published.run, judgement)
        summary = (published.run.directory / "summary.md").read_text(encoding="utf-8")
        append_step_summary(summary)
        statuses.append(exit_status(judgement))
        return "\n".join([published.summary, *verdict_lines(published.run, judgement)])

    status = sweep_command.main(argv, prog, publish=summary_of, prepare=load_reports,
                                plugins=[progress_against_baseline(options)])
    if statuses and status in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return max(int(status), statuses[0])
    return status
