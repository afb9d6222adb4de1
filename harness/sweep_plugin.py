"""The sweep's pytest plugin: an item per session; workers hand rows to the controller, which stores them."""

from __future__ import annotations

import gc
import marshal
import os
import re
import signal
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from chatparity.files import FileFault, cause_of, replacing
from chatparity.model import ParserUnderTest, Record, Row, SessionRecord
from chatparity.processes import end_with_parent, interrupt_on_term
from harness import store
from harness.collector import ReadingCollector
from harness.export_reads import ExportReads
from harness.input_rules import broken_input
from harness.known_divergences import KnownDivergences, divergences_in
from harness.oracle_cache import OracleCache, take_notes
from harness.oracle_reads import OracleIdentity, OracleReads
from harness.outcome_labels import failing_label, row_label
from harness.parser_specs import expectations_path, load_parser, parser_spec
from harness.parsers import WATCHDOG, deadline_scope
from harness.policies import Policies, policies_in
from harness.runner import SessionRunner
from harness.sources import Source, load_source
from harness.stamp import make_stamp
from harness.sweep_config import CONFIG_FILE, SweepConfig

PROPERTY = "chatparity"
FAILING = "chatparity_failing"
NO_ROWS = "chatparity_no_rows"
NOTES = "chatparity_notes"
NOTHING_STORED = 20
STDERR_LOG = "parser-stderr"
NOTE_LENGTH = 300
"""The characters of a session's error a one-line message quotes."""
CRASHED_WORKER = re.compile(r"worker '[^']*' crashed while running '[^']*'")


class SweepState:
    """One process's view of the sweep: its config, its scratch directory, its source, and (lazily) its parser
    and oracle."""

    def __init__(self, config: SweepConfig, scratch: Path) -> None:
        self.config = config
        self.scratch = scratch
        self.source: Source = load_source(config.source)
        self._parser: ParserUnderTest | None = None
        self._identity: tuple[str, str] | None = None
        self._oracle: OracleReads | None = None
        self.spool: store.Spool | None = None
        self.stored: set[str] = set()
        self.identities: dict[str, tuple[str, str]] = {}
        self.lost: dict[str, str] = {}
        self.empty: dict[str, str] = {}
        self.notes: dict[str, None] = {}
        self.collected: set[str] = set()
        self.unplanned = ""
        self.fault: FileFault | None = None
        self.collector = ReadingCollector()
        expectations = expectations_path(config.expectations)
        self.policies: Policies = policies_in(expectations)
        self.known: KnownDivergences = divergences_in(expectations)

    @property
    def parser(self) -> ParserUnderTest:
        """The parser under test, loaded on first use; SweepItemError when it cannot start."""
        if self._parser is None:
            cache = Path(self.config.oracle_cache) if self.config.oracle_cache else None
            try:
                log = self.scratch / f"{STDERR_LOG}-{os.getpid()}.log"
                self._parser = load_parser(parser_spec(self.config.parser), self.config.timeout, cache, log)
            except Exception as error:
                raise SweepItemError(
                    f"parser {self.config.parser!r} cannot start: {type(error).__name__}: {error}"
                ) from error
        return self._parser

    @property
    def identity(self) -> tuple[str, str]:
        """The parser's name (the config's when given) and revision, asked once."""
        if self._identity is None:
            self._identity = (self.config.parser_name or self.parser.name, self.parser.revision())
        return self._identity

    @property
    def oracle(self) -> OracleReads:
        """The oracle's reads: from the export `--oracle` names, else through the disk cache unless it is
        switched off."""
        if self._oracle is None and self.config.oracle_export:
            self._oracle = ExportReads(Path(self.config.oracle_export), self.config.timeout)
        if self._oracle is None:
            cache = OracleCache(Path(self.config.oracle_cache)) if self.config.oracle_cache else None
            self._oracle = OracleReads(
                OracleIdentity.of(self.config.oracle_version), cache, self.config.timeout
            )
        return self._oracle

    def keep(self, nodeid: str, payload: dict[str, Any]) -> None:
        """Spool one finished session's record and rows (the controller holds none of them)."""
        if self.spool is None:
            self.spool = store.Spool()
        self.spool.add(nodeid, SessionRecord, [payload["session"]])
        self.spool.add(nodeid, Row, payload["rows"])
        self.stored.add(nodeid)
        if not payload["rows"]:
            session = payload["session"]
            why = session["error"] or "no reply of it runs at the chunkings and cases selected"
            self.empty[nodeid] = " ".join(f"{session['status']}: {why}".split())[:NOTE_LENGTH]
        first = min(self.identities, default=None)
        if first is None or nodeid < first:
            self.identities = {nodeid: (payload["parser_name"], payload["parser_revision"])}

    def stop_children(self) -> None:
        """Stop the parser and the oracle this process started (their logs and answers written)."""
        if self._parser is not None:
            self._parser.close()
        if self._oracle is not None:
            self._oracle.close()

    def close(self) -> None:
        """Stop the parser and the oracle this process started, drop the spool, and put the garbage collector
        back as it was."""
        self.collector.stop()
        if self.spool is not None:
            self.spool.close()
            self.spool = None
        self.stop_children()


class SweepItemError(Exception):
    """A failure that costs a sweep item, reported as its one-line message rather than a traceback."""


STATE = pytest.StashKey[SweepState]()


def state_of(config: pytest.Config) -> SweepState | None:
    """The sweep state of this pytest process, if a sweep file was named."""
    return config.stash.get(STATE, None)


def pytest_configure(config: pytest.Config) -> None:
    """Read the sweep config named on the command line. A worker ends with the controller that started it (and
    takes SIGTERM as an interruption, so it stops its parser and oracle first)."""
    for arg in config.args:
        path = Path(arg.split("::")[0])
        if path.name == CONFIG_FILE and path.exists():
            state = SweepState(SweepConfig.read(path), path.parent)
            config.stash[STATE] = state
            if hasattr(config, "workerinput"):
                WATCHDOG.enabled = True
                end_with_parent(signal.SIGTERM)
                interrupt_on_term(forward=False)
            else:
                config.pluginmanager.register(Controller(state), "chatparity-controller")


def pytest_collection_finish(session: pytest.Session) -> None:
    """A process about to read sessions (a worker, or the controller without workers) tunes the garbage
    collector for it (`ReadingCollector`)."""
    state = state_of(session.config)
    if state is not None and session.items:
        state.collector.start()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The sweep file collects one item per planned session."""
    if file_path.name == CONFIG_FILE and state_of(parent.config) is not None:
        return SweepFile.from_parent(parent, path=file_path)
    return None


def item_name(planned: Any) -> str:
    """A readable item name: template, mode label and conversation."""
    session = planned.session
    return f"{session.template}[{session.mode.label}|{session.conversation}]"


class OneLineFailure:
    """A sweep node whose SweepItemError is reported as its one-line message."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """A SweepItemError as its message; anything else as pytest shows it."""
        if isinstance(excinfo.value, SweepItemError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)  # type: ignore[misc]


class SweepFile(OneLineFailure, pytest.File):
    """The sweep: its items are the planned sessions (the same, in the same order, in every worker)."""

    def collect(self) -> Iterator[pytest.Item]:
        """One SweepItem per planned session, restricted to failing sessions under --only-failing."""
        state = state_of(self.config)
        assert state is not None
        wanted = state.config.selected_sessions
        seen: set[str] = set()
        try:
            plan = state.source.plan(state.config)
        except Exception as error:
            raise SweepItemError(f"cannot plan the sweep: {type(error).__name__}: {error}") from error
        for planned in plan:
            if wanted is not None and planned.session.id not in wanted:
                continue
            name = item_name(planned)
            if name in seen:
                name = f"{name}#{planned.session.id}"
            seen.add(name)
            yield SweepItem.from_parent(self, name=name, planned=planned)


class SweepItem(OneLineFailure, pytest.Item):
    """One planned session: run every reply at every chunking; the rows travel in user_properties."""

    def __init__(self, *, planned: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.planned = planned

    def runtest(self) -> None:
        """Read the session's replies and attach its session record and rows."""
        state = state_of(self.config)
        assert state is not None
        config = state.config
        name, revision = state.identity
        replies = state.source.replies(self.planned, config.profile)
        broken = broken_input(self.planned.session, replies)
        if broken:
            raise SweepItemError(f"input rule: {broken}")
        profile = config.profile_rules
        runner = SessionRunner(
            self.planned,
            replies,
            state.parser,
            state.oracle,
            profile.chunkings,
            profile.for_mode(self.planned.session.mode.label),
            config.selected,
            state.policies,
            state.known,
        )
        with deadline_scope():
            result = runner.run()
        state.oracle.flush()
        self.user_properties.append((NOTES, take_notes()))
        payload = {
            "session": record_dict(result.session),
            "rows": [record_dict(row) for row in result.rows],
            "parser_name": name,
            "parser_revision": revision,
        }
        self.user_properties.append((PROPERTY, payload_bytes(payload)))
        self.user_properties.append((FAILING, failing_labels(result.rows)))
        self.user_properties.append((NO_ROWS, not result.rows))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the item comes from, for pytest's reports."""
        return self.path, 0, self.name


def failing_labels(rows: tuple[Row, ...]) -> list[tuple[str, str, str]]:
    """The (case id, chunking, label) of each row whose label is a failure of the parser's."""
    labelled = ((row, row_label(row)) for row in rows)
    return [(row.case_id, row.chunking, label) for row, label in labelled if failing_label(label)]


def failing_of(report: pytest.TestReport) -> list[tuple[str, str, str]] | None:
    """The failing rows' labels a session's report carries (None for a report without them)."""
    for name, value in report.user_properties:
        if name == FAILING:
            return [(case, chunking, label) for case, chunking, label in cast(list[list[str]], value)]
    return None


def record_dict(record: Record) -> dict[str, Any]:
    """A flat record's columns as a dict (what dataclasses.asdict gives, without its deep copies)."""
    names = store.column_names(type(record))  # type: ignore[arg-type]
    return {name: getattr(record, name) for name in names}


def storable(value: Any) -> Any:
    """A JSON value whose strings are all UTF-8 text: a lone surrogate becomes its escape, e.g. '\\ud800'."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [storable(item) for item in value]
    return value


SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf]")
"""Where marshal wrote a lone surrogate: UTF-8 text never holds these bytes (they encode surrogates), marshal's
strings hold them only for a surrogate, and its binary fields may hold them by chance (which costs only an
escaping pass)."""


def payload_bytes(payload: dict[str, Any]) -> bytes:
    """A session's payload as marshal data whose strings the store can hold (lone surrogates a parser wrote
    are escaped)."""
    data = marshal.dumps(payload)
    if SURROGATE_BYTES.search(data) is None:
        return data
    return marshal.dumps(storable(payload))


def payload_of(report: pytest.TestReport) -> dict[str, Any] | None:
    """The sweep payload an item attached to its report."""
    for name, value in report.user_properties:
        if name == PROPERTY:
            return cast(dict[str, Any], marshal.loads(cast(bytes, value)))
    return None


def drop_payload(holder: pytest.TestReport | pytest.Item) -> None:
    """Remove the payload from a report or an item."""
    holder.user_properties[:] = [prop for prop in holder.user_properties if prop[0] != PROPERTY]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """The call's report has carried the payload: drop it from the item, so its teardown report does not."""
    drop_payload(item)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Once every plugin has read the report (a worker has sent it to the controller), its payload goes: the
    reports pytest keeps (its terminal reporter's tallies) must not hold every session's rows."""
    drop_payload(report)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """Show a session with a row that fails as `F` in pytest's progress (a plugin that knows the parser's
    baseline shows the rows it records failing alike as `.`), one that yields no row (llama.cpp cannot render it)
    as `0`, never as passing, and one that could not run (lost) as `E`."""
    if report.when == "call" and report.failed:
        return LOST_STATUS
    if report.when != "call" or not report.passed:
        return None
    if dict(report.user_properties).get(NO_ROWS):
        return "no rows", "0", "NO ROWS"
    if failing_of(report):
        return FAILING_STATUS
    return None


FAILING_STATUS = ("failing", "F", "FAILING")
LOST_STATUS = ("lost", "E", "LOST")


class Controller:
    """The controller's collector of payloads: one per item, from this process or from the workers."""

    def __init__(self, state: SweepState) -> None:
        self.state = state

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """The session, for `stop`."""
        self.session = session

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The items this process collected (the whole sweep when it runs without workers)."""
        self.state.collected.update(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The items a worker collected (every worker collects the whole sweep)."""
        self.state.collected.update(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Spool each session's payload and drop it from the report; an item that failed is lost (its rows
        are missing from the store)."""
        payload = payload_of(report) if report.when == "call" and report.passed else None
        drop_payload(report)
        for name, notes in report.user_properties:
            if name == NOTES:
                self.state.notes.update(dict.fromkeys(cast(list[str], notes)))
        if payload is not None and self.state.fault is None:
            try:
                self.state.keep(report.nodeid, payload)
            except (OSError, sqlite3.Error) as error:
                self.stop(spool_fault(error))
        elif report.failed:
            lines = report.longreprtext.strip().splitlines()
            why = lines[-1] if lines else report.when or ""
            self.state.lost[report.nodeid] = CRASHED_WORKER.sub("its worker process died", why)

    def stop(self, fault: FileFault) -> None:
        """End the sweep at once: the rows cannot be kept."""
        self.state.fault = fault
        self.session.shouldstop = str(fault)
        scheduler = self.session.config.pluginmanager.getplugin("dsession")
        if scheduler is not None:
            scheduler.shouldstop = str(fault)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """Keep why the sweep could not be planned, if it could not."""
        if report.failed:
            lines = report.longreprtext.strip().splitlines()
            self.state.unplanned = lines[-1] if lines else "collection failed"


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A worker's process ends with its session: everything left is frozen, so the interpreter's last garbage
    collection does not walk the readers and reads it kept (still freed as their references drop)."""
    if state_of(config) is not None and hasattr(config, "workerinput"):
        gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Workers close their children; the controller writes the store unless the run was interrupted or stored
    no row (a fault that keeps it from writing is one line, exit status 2)."""
    state = state_of(session.config)
    if state is None:
        return
    try:
        if hasattr(session.config, "workerinput"):
            return
        for note in [*state.notes, *take_notes()]:
            print(f"chatparity sweep: warning: {note}", file=sys.stderr)
        if state.fault is not None:
            print(f"\nchatparity sweep: {state.fault}", file=sys.stderr)
            session.exitstatus = NOTHING_STORED
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED and not state.unplanned:
            return
        for nodeid in sorted(state.collected - state.stored - set(state.lost)):
            state.lost[nodeid] = "not run"
        if state.spool is None or not state.spool.rows:
            why = nothing_ran(state)
            print(f"\nchatparity sweep: {why}; nothing written to {state.config.out}", file=sys.stderr)
            session.exitstatus = NOTHING_STORED
            return
        state.stop_children()
        try:
            stamp = write_store(state)
        except FileFault as fault:
            print(f"\nchatparity sweep: {fault}", file=sys.stderr)
            session.exitstatus = NOTHING_STORED
            return
        for line in idle_chunkings(state.config, stamp["chunking_rows"]):
            print(f"chatparity sweep: {line}", file=sys.stderr)
    finally:
        state.close()
    if state.lost:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def nothing_ran(state: SweepState) -> str:
    """Why a sweep has no rows to store: no session was selected, or every session was lost."""
    if state.unplanned:
        return state.unplanned
    if state.empty:
        key = min(state.empty)
        return f"no session yields a row ({len(state.empty)} sessions; first {key}: {state.empty[key]})"
    if state.lost:
        key = min(state.lost)
        return f"no session ran ({len(state.lost)} lost; first {key}: {state.lost[key]})"
    config = state.config
    chosen = {"--templates": config.templates, "--family": config.family, "--mode": config.mode,
              "--corpus": config.corpus, "--only-failing": config.only_failing}
    flags = ", ".join(f"{flag} {value!r}" for flag, value in chosen.items() if value)
    return f"no session matches the selection ({flags or 'none'})"


def idle_chunkings(config: SweepConfig, rows: dict[str, int]) -> list[str]:
    """A line for each chunking named with --chunking that made no row, saying why it could not run."""
    why = (
        "the profile's rules (--keep-profile-rules) pick no reply of the selection for it"
        if config.keep_profile_rules
        else "no reply of the selection could be streamed at it"
    )
    return [f"--chunking {name} made no row: {why}" for name in config.chunkings if not rows.get(name)]


def write_store(state: SweepState) -> dict[str, Any]:
    """Write the run's stamp, sessions and rows into a fresh file and move it over rows.sqlite, the parser's
    stderr beside it; the reports there are marked incomplete first (they describe the run before until they
    are written again); the stamp. A FileFault when the file system will not take them (the earlier run
    stays)."""
    out = Path(state.config.out)
    name, revision = next(iter(state.identities.values()))
    assert state.spool is not None
    final = out / store.STORE_NAME
    try:
        with replacing(final) as partial:
            connection = store.connect(partial)
            try:
                lost = [f"{key}: {why}" for key, why in sorted(state.lost.items())]
                state.spool.write(connection)
                stamp = make_stamp(state.config, name, revision, lost, store.rows_per_chunking(connection))
                store.write_stamp(connection, stamp)
            finally:
                connection.close()
            keep_stderr(state.scratch, out)
            store.mark_reports_incomplete(out)
    except (OSError, sqlite3.Error) as error:
        cause = cause_of(error) if isinstance(error, OSError) else str(error)
        raise FileFault(final, cause, "this run's rows are not stored and any earlier run there is untouched: "
                        "free space (in --out or TMPDIR) or name another --out, then sweep again") from None
    return stamp


def keep_stderr(scratch: Path, out: Path) -> None:
    """The parser's stderr logs of every process, one after another, as OUT/parser-stderr.log (none when the
    parser wrote nothing there)."""
    logs = sorted(scratch.glob(f"{STDERR_LOG}-*.log"))
    target = out / f"{STDERR_LOG}.log"
    if not logs:
        target.unlink(missing_ok=True)
        return
    with replacing(target) as partial, partial.open("wb") as joined:
        for log in logs:
            joined.write(log.read_bytes())


def spool_fault(error: OSError | sqlite3.Error) -> FileFault:
    """A spool that cannot take a session's rows."""
    cause = cause_of(error) if isinstance(error, OSError) else str(error)
    return FileFault(Path(tempfile.gettempdir()), f"cannot spool the rows there ({cause})",
                     "nothing was stored: free space there or point TMPDIR elsewhere, then sweep again")
