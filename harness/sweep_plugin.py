"""The sweep's pytest plugin: an item per session; workers hand rows to the controller, which stores them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import store
from harness.oracle_cache import OracleCache
from harness.oracle_reads import OracleIdentity, OracleReads
from harness.outcomes import Outcome
from harness.parsers import ParserUnderTest, load_parser
from harness.runner import SessionRunner
from harness.sources import Source, load_source
from harness.stamp import make_stamp
from harness.sweep_config import CONFIG_FILE, SweepConfig

PROPERTY = "chatparity"
DIFFERS = "chatparity_differs"


class SweepState:
    """One process's view of the sweep: its config, its source, and (lazily) its parser and oracle."""

    def __init__(self, config: SweepConfig) -> None:
        self.config = config
        self.source: Source = load_source(config.source)
        self._parser: ParserUnderTest | None = None
        self._revision: str | None = None
        self._oracle: OracleReads | None = None
        self.payloads: dict[str, dict[str, Any]] = {}
        self.lost: dict[str, str] = {}

    @property
    def parser(self) -> ParserUnderTest:
        """The parser under test, loaded on first use."""
        if self._parser is None:
            self._parser = load_parser(self.config.parser, self.config.timeout)
        return self._parser

    @property
    def revision(self) -> str:
        """The parser's revision, asked once."""
        if self._revision is None:
            self._revision = self.parser.revision()
        return self._revision

    @property
    def oracle(self) -> OracleReads:
        """The oracle's reads, through the disk cache unless it is switched off."""
        if self._oracle is None:
            cache = OracleCache(Path(self.config.oracle_cache)) if self.config.oracle_cache else None
            self._oracle = OracleReads(
                OracleIdentity.of(self.config.oracle_version), cache, self.config.timeout
            )
        return self._oracle

    def close(self) -> None:
        """Stop the parser and the oracle this process started."""
        if self._parser is not None:
            self._parser.close()
        if self._oracle is not None:
            self._oracle.close()


STATE = pytest.StashKey[SweepState]()


def state_of(config: pytest.Config) -> SweepState | None:
    """The sweep state of this pytest process, if a sweep file was named."""
    return config.stash.get(STATE, None)


def pytest_configure(config: pytest.Config) -> None:
    """Read the sweep config named on the command line."""
    for arg in config.args:
        path = Path(arg.split("::")[0])
        if path.name == CONFIG_FILE and path.exists():
            state = SweepState(SweepConfig.read(path))
            config.stash[STATE] = state
            if not hasattr(config, "workerinput"):
                config.pluginmanager.register(Controller(state), "chatparity-controller")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The sweep file collects one item per planned session."""
    if file_path.name == CONFIG_FILE and state_of(parent.config) is not None:
        return SweepFile.from_parent(parent, path=file_path)
    return None


def item_name(planned: Any) -> str:
    """A readable item name: template, mode label and conversation."""
    session = planned.session
    return f"{session.template}[{session.mode.label}|{session.conversation}]"


class SweepFile(pytest.File):
    """The sweep: its items are the planned sessions (the same, in the same order, in every worker)."""

    def collect(self) -> Iterator[pytest.Item]:
        """One SweepItem per planned session, restricted to failing sessions under --only-failing."""
        state = state_of(self.config)
        assert state is not None
        wanted = state.config.selected_sessions
        seen: set[str] = set()
        for planned in state.source.plan(state.config):
            if wanted is not None and planned.session.id not in wanted:
                continue
            name = item_name(planned)
            if name in seen:
                name = f"{name}#{planned.session.id}"
            seen.add(name)
            yield SweepItem.from_parent(self, name=name, planned=planned)


class SweepItem(pytest.Item):
    """One planned session: run every reply at every chunking; the rows travel in user_properties."""

    def __init__(self, *, planned: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.planned = planned

    def runtest(self) -> None:
        """Read the session's replies and attach its session record and rows."""
        state = state_of(self.config)
        assert state is not None
        config = state.config
        replies = state.source.replies(self.planned, config.profile)
        profile = config.profile_rules
        runner = SessionRunner(
            self.planned,
            replies,
            state.parser,
            state.oracle,
            profile.chunkings,
            profile.applies,
            config.selected,
        )
        result = runner.run()
        rows = list(result.rows)
        payload = {
            "session": result.session,
            "rows": rows,
            "parser_revision": state.revision,
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        }
        self.user_properties.append((PROPERTY, json.dumps(payload, ensure_ascii=False)))
        self.user_properties.append((DIFFERS, differs(rows)))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the item comes from, for pytest's reports."""
        return self.path, 0, self.name


def differs(rows: list[dict[str, Any]]) -> bool:
    """Whether any row is not a clean match."""
    return any(
        row["outcome"] != Outcome.MATCH.value
        or 0 in (row["consistent"], row["monotonic"], row["clean"], row["snapshot_parity"])
        for row in rows
    )


def payload_of(report: pytest.TestReport) -> dict[str, Any] | None:
    """The sweep payload an item attached to its report."""
    for name, value in report.user_properties:
        if name == PROPERTY:
            return json.loads(str(value))
    return None


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """Show sessions with any non-matching row as `D` (differs) in pytest's progress."""
    if report.when == "call" and report.passed and dict(report.user_properties).get(DIFFERS):
        return "differs", "D", "DIFFERS"
    return None


class Controller:
    """The controller's collector of payloads: one per item, from this process or from the workers."""

    def __init__(self, state: SweepState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep each session's payload; an item that failed is lost (its rows are missing from the store)."""
        payload = payload_of(report)
        if payload is not None and report.passed:
            self.state.payloads[report.nodeid] = payload
        elif report.failed:
            lines = report.longreprtext.strip().splitlines()
            self.state.lost[report.nodeid] = lines[-1] if lines else report.when or ""


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Workers close their children; the controller writes the store unless the run was interrupted."""
    state = state_of(session.config)
    if state is None:
        return
    state.close()
    if hasattr(session.config, "workerinput") or exitstatus == pytest.ExitCode.INTERRUPTED:
        return
    write_store(state)


def write_store(state: SweepState) -> Path:
    """Write the run's stamp, sessions and rows into a fresh file and move it over rows.sqlite."""
    out = Path(state.config.out)
    out.mkdir(parents=True, exist_ok=True)
    final = out / store.STORE_NAME
    partial = out / f"{store.STORE_NAME}.partial-{os.getpid()}"
    partial.unlink(missing_ok=True)
    payloads = [state.payloads[key] for key in sorted(state.payloads)]
    revision = next((payload["parser_revision"] for payload in payloads), "")
    workers = sorted({payload["worker"] for payload in payloads})
    sessions = sorted((payload["session"] for payload in payloads), key=lambda record: record["session_id"])
    rows = sorted(
        (row for payload in payloads for row in payload["rows"]),
        key=lambda row: (row["case_id"], row["chunking"]),
    )
    connection = store.connect(partial)
    try:
        lost = [f"{key}: {why}" for key, why in sorted(state.lost.items())]
        store.write_stamp(connection, make_stamp(state.config, revision, lost, workers))
        store.write_sessions(connection, sessions)
        store.write_rows(connection, rows)
    finally:
        connection.close()
    partial.replace(final)
    return final
