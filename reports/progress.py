"""The sweep's progress letters against the parser's baseline: a session whose failing rows the baseline records
failing alike shows `.`, one with a new failure or a regression `F`."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import pytest

from harness.outcome_labels import failing_label
from harness.sweep_plugin import failing_of


class BaselineProgress:
    """A pytest plugin (in the sweep's controller) that shows a session as `.` when every row of it that fails
    is recorded failing the same way in the baseline at `directory`."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    @cached_property
    def accepted(self) -> frozenset[tuple[str, str, str]]:
        """The (case id, chunking, label) of every row the baseline records failing (none without a readable
        baseline: the sweep's verdict reports an unreadable one); pandas is imported here, once a session fails,
        not while the workers start."""
        from reports.baselines import BaselineError, outcomes_file, read_baseline

        if self.directory is None or outcomes_file(self.directory) is None:
            return frozenset()
        try:
            outcomes = read_baseline(self.directory).outcomes
        except BaselineError:
            return frozenset()
        return frozenset(
            (case, chunking, label)
            for case, chunking, label in zip(outcomes["case_id"], outcomes["chunking"], outcomes["outcome"])
            if failing_label(label)
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
        """`.` for a session whose failing rows the baseline records alike."""
        failing = failing_of(report) if report.when == "call" and report.passed else None
        if failing and all(item in self.accepted for item in failing):
            return "passed", ".", "PASSED"
        return None
