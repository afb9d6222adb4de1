"""The pytest plugin for a parser's own suite: one item per case of a `chatparity export`, judged as a sweep
judges it, a failure shown as a readable diff. Loaded on demand only (`-p chatparity.pytest_plugin`)."""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from chatparity.model import Case, Outcome, ParserUnderTest, Reply, Row
from harness.export_file import check_case, check_header, decoded_line, lines
from harness.export_reads import ExportReads
from harness.known_divergences import DivergenceFileError, divergences_in
from harness.outcome_labels import failing_label, row_label
from harness.parser_specs import ParserKind, load_parser, parser_spec
from harness.parsers import DEFAULT_TIMEOUT, deadline_scope
from harness.policies import PolicyFileError, policies_in
from harness.runner import SessionRunner
from harness.sources import CatalogSource
from harness.sweep_config import SweepConfig
from reports.show import DEFAULT_REPLAY_DIR, glob_literal, pretty, row_line, show_command

STATE = pytest.StashKey["ExportCases"]()


class CaseFailure(Exception):
    """A case the parser reads otherwise than llama.cpp, beyond its expectations: the report is the message."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options."""
    group = parser.getgroup("chatparity", "conformance to llama.cpp's readings of a chatparity export")
    group.addoption("--chatparity-export", metavar="FILE", help="the export (chatparity export --out FILE) "
                    "whose cases to collect; without it the plugin collects nothing")
    group.addoption("--chatparity-parser", metavar="SPEC", help="the parser under test, as chatparity sweep "
                    "--parser takes it (pkg.module:factory, or cmd:COMMAND)")
    group.addoption("--chatparity-expectations", metavar="DIR", help="the parser's expectations: its "
                    "policies.toml and known_divergences.toml, so documented departures pass")
    group.addoption("--chatparity-templates", metavar="GLOB", help="only cases of templates whose name matches")
    group.addoption("--chatparity-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                    help=f"seconds per parser call (default {DEFAULT_TIMEOUT:g})")


def pytest_configure(config: pytest.Config) -> None:
    """With --chatparity-export, check the options and add the export to what pytest collects (unless an
    argument names it, or a case of it)."""
    export = config.getoption("chatparity_export")
    if export is None:
        return
    path = Path(export).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"--chatparity-export {export}: no such file")
    spec = config.getoption("chatparity_parser")
    if not spec:
        raise pytest.UsageError("--chatparity-export needs --chatparity-parser SPEC (pkg.module:factory)")
    try:
        checked = parser_spec(spec)
    except ValueError as error:
        raise pytest.UsageError(f"--chatparity-parser: {error}") from None
    if checked.kind in (ParserKind.ORACLE, ParserKind.SERVER):
        raise pytest.UsageError(f"--chatparity-parser {spec} runs llama.cpp itself: an export holds its readings")
    expectations = config.getoption("chatparity_expectations")
    if expectations and not Path(expectations).is_dir():
        raise pytest.UsageError(f"--chatparity-expectations {expectations}: no such directory")
    try:
        config.stash[STATE] = ExportCases(path, spec, expectations, config.getoption("chatparity_templates"),
                                          config.getoption("chatparity_timeout"))
    except (PolicyFileError, DivergenceFileError) as error:
        raise pytest.UsageError(f"--chatparity-expectations {expectations}: {error}") from None
    named = {(config.invocation_params.dir / arg.partition("::")[0]).resolve() for arg in config.args}
    if path not in named:
        config.args.append(str(path))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the parser, where one was started."""
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The export --chatparity-export names collects one item per case, its node id the export's path from the
    root directory (its name where it lies outside)."""
    state = parent.config.stash.get(STATE, None)
    if state is None or file_path.resolve() != state.path:
        return None
    root = parent.config.rootpath.resolve()
    nodeid = state.path.relative_to(root).as_posix() if state.path.is_relative_to(root) else state.path.name
    return ExportFile.from_parent(parent, path=file_path, nodeid=nodeid)


@dataclasses.dataclass(frozen=True)
class ExportCase:
    """One case line of an export: what its item needs to find the case and name it."""

    session: str
    case: str
    template: str
    mode: str
    shape: str
    chunkings: tuple[str, ...]

    @property
    def name(self) -> str:
        """The item's name: template/mode/shape/case id."""
        return f"{self.template}/{self.mode}/{self.shape}/{self.case}"


class ExportCases:
    """The run's export, options and (lazily) its parser, oracle and planned sessions."""

    def __init__(self, path: Path, spec: str, expectations: str | None, templates: str | None,
                 timeout: float) -> None:
        self.path = path
        self.spec = spec
        self.expectations = expectations
        self.templates = templates
        self.timeout = timeout
        directory = Path(expectations) if expectations else None
        self.policies = policies_in(directory)
        self.known = divergences_in(directory)
        self.header: dict[str, Any] = {}
        self.planned: dict[str, Any] = {}
        self.replies: dict[str, list[Reply]] = {}
        self._parser: ParserUnderTest | None = None
        self._oracle: ExportReads | None = None

    def cases(self) -> Iterator[ExportCase]:
        """The export's cases (of the templates --chatparity-templates matches), each line checked."""
        for number, text in lines(self.path):
            data = decoded_line(self.path, number, text)
            if number == 1:
                check_header(self.path, data)
                self.header = data
                continue
            check_case(self.path, number, data)
            if "case" in data and (self.templates is None or fnmatch(data["template"], self.templates)):
                names = tuple(name for name in self.header["chunkings"] if name in data["chunkings"])
                yield ExportCase(data["session"], data["case"], data["template"], data["mode"], data["shape"], names)

    def plan(self) -> None:
        """Plan the export's sessions again from the catalog, by their ids."""
        selection = self.header["selection"]
        config = SweepConfig(parser=self.spec, profile=self.header["profile"], out="",
                             templates=selection.get("templates"), family=selection.get("family"),
                             mode=selection.get("mode"), oracle_version=self.header["llama_cpp_python_version"])
        self.planned = {planned.session.id: planned for planned in CatalogSource().plan(config)}

    def reply(self, planned: Any, case_id: str) -> Reply | None:
        """The reply of the planned session that makes the case (None when this checkout makes no such case)."""
        session = planned.session
        if session.id not in self.replies:
            self.replies = {session.id: list(CatalogSource().replies(planned, self.header["profile"]))}
        return next((reply for reply in self.replies[session.id] if Case(session, reply).id == case_id), None)

    @property
    def parser(self) -> ParserUnderTest:
        """The parser under test, started on first use."""
        if self._parser is None:
            self._parser = load_parser(parser_spec(self.spec), self.timeout)
        return self._parser

    @property
    def oracle(self) -> ExportReads:
        """llama.cpp's answers, read from the export."""
        if self._oracle is None:
            self._oracle = ExportReads(self.path, self.timeout)
        return self._oracle

    def close(self) -> None:
        """Stop the parser and the oracle's reads."""
        if self._parser is not None:
            self._parser.close()
        if self._oracle is not None:
            self._oracle.close()

    def replay(self, row: Row) -> str:
        """The commands that sweep just this case against the export and show it."""
        words = ["chatparity", "sweep", "--parser", self.spec, "--oracle", str(self.path),
                 "--profile", self.header["profile"], "--templates", glob_literal(row.template),
                 "--mode", glob_literal(row.mode), "--case", row.case_id]
        if self.expectations:
            words += ["--expectations", self.expectations]
        target = f"{DEFAULT_REPLAY_DIR}/{row.case_id}"
        return f"{shlex.join([*words, '--out', target])} ; {show_command(row.case_id, target)}"


def state_of(config: pytest.Config) -> ExportCases:
    """The run's export cases."""
    return config.stash[STATE]


class ExportFile(pytest.File):
    """The export: an item per case."""

    def collect(self) -> Iterator[pytest.Item]:
        """One CaseItem per case line."""
        state = state_of(self.config)
        cases = list(state.cases())
        state.plan()
        for case in cases:
            yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseItem(pytest.Item):
    """One case: the parser's whole reading and every chunking's stream, against llama.cpp's."""

    def __init__(self, *, case: ExportCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        """Read the case as a sweep does; fail on any row a failure of the parser's."""
        state = state_of(self.config)
        planned = state.planned.get(self.case.session)
        reply = state.reply(planned, self.case.case) if planned is not None else None
        if reply is None:
            raise CaseFailure(f"case {self.case.case}: this checkout of chatparity does not make it (its template, "
                              "mode or corpus changed since the export was written): export again")
        runner = SessionRunner(planned, [reply], state.parser, state.oracle, self.case.chunkings,
                               lambda name, reply: True, policies=state.policies, known=state.known)
        with deadline_scope():
            result = runner.run()
        if not result.rows:
            raise CaseFailure(f"case {self.case.case}: no row: {result.session.error}")
        if all(row.outcome == Outcome.UNSUPPORTED.value for row in result.rows):
            pytest.skip(f"the parser declines the session: {result.session.error}")
        failing = [(row, label) for row in result.rows if failing_label(label := row_label(row))]
        if failing:
            raise CaseFailure(report(state, failing))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """A CaseFailure as its report; anything else as pytest shows it."""
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the item comes from."""
        return self.path, 0, self.name


def report(state: ExportCases, failing: list[tuple[Row, str]]) -> str:
    """The failing rows of one case: the reply, then per chunking its label, both readings and the first
    difference, then the replay commands."""
    first = failing[0][0]
    text = [
        f"case {first.case_id}: {first.template} [{first.mode}], shape {first.shape}, origin {first.origin}, "
        + ("partial (cut)" if first.partial else "finished"),
        f"reply text: {json.dumps(first.reply, ensure_ascii=False)}",
    ]
    shown: tuple[str | None, str | None] | None = None
    for row, label in failing:
        text += ["", f"{row.chunking}: {label}", row_line(pd.Series(dataclasses.asdict(row)))]
        readings = (row.oracle_reading, row.parser_reading)
        if readings != shown:
            text += [f"llama.cpp's reading ({row.chunking}):", pretty(row.oracle_reading),
                      f"the parser's reading ({row.chunking}):", pretty(row.parser_reading)]
            shown = readings
        text.append(f"first difference: {row.detail or row.error or 'none (the readings agree)'}")
        if row.stream_detail:
            text.append(f"stream: {row.stream_detail}")
    text += ["", "replay just this case:", f"  {state.replay(first)}"]
    return "\n".join(text)
