"""`chatparity sweep`: run the oracle and a parser over the corpus in a pytest session, store the rows."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Generator, Sequence
from pathlib import Path

import pytest

from chatparity.files import FileFault, fault, remove_stale, temporary_path
from chatparity.model import Profile
from corpora.corpus_file import read_corpus
from harness import chunkings, store
from harness.export_file import read_export
from harness.known_divergences import DivergenceFileError, divergences_in
from harness.oracle_cache import default_directory
from harness.parser_specs import (
    DEFAULT_PARSER,
    ParserKind,
    ParserSpec,
    expectations_directory,
    expectations_path,
    parser_spec,
)
from harness.parsers import DEFAULT_TIMEOUT
from harness.policies import PolicyFileError, policies_in
from harness.profiles import rules_of
from harness.run_directory import RunDirectory
from harness.sources import load_source
from harness.sweep_config import CONFIG_FILE, SweepConfig
from harness.sweep_plugin import NOTHING_STORED, STDERR_LOG
from oracle.build import BuildError, ensure_binary
from oracle.client import BINARY_ENV
from oracle.server_build import ServerBuildError, ensure_server
from templates.index import load_index
from templates.pins import resolve_version
from templates.upstream import SourceError

RUNS_DIR = Path("reports") / "runs"
MAX_WORKER_RESTARTS = 1_000_000
SERVER_BUILD_FAILED = 3
TMPDIR_REMEDY = "the sweep keeps its scratch files there: free space there or point TMPDIR elsewhere"



def add_selection_flags(parser: argparse.ArgumentParser) -> None:
    """The flags choosing the profile and the templates and modes of it to read."""
    parser.add_argument("--profile", choices=[profile.value for profile in Profile], default=Profile.QUICK.value)
    parser.add_argument("--templates", metavar="GLOB", help="only templates whose file name matches")
    parser.add_argument("--family", help="only templates of this family")
    parser.add_argument("--mode", metavar="GLOB", help="only modes whose label matches, e.g. 'think/*'")


def add_oracle_flags(parser: argparse.ArgumentParser) -> None:
    """The flags choosing the oracle's version and its answer cache."""
    parser.add_argument("--oracle-version", help="llama-cpp-python version of the oracle (default: the pin)")
    parser.add_argument(
        "--oracle-cache", type=Path, help=f"oracle answer cache (default {default_directory()})"
    )
    parser.add_argument("--no-oracle-cache", action="store_true", help="always ask llama.cpp")

def arguments(prog: str) -> argparse.ArgumentParser:
    """The sweep's flags."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Read every reply with llama.cpp and the parser "
        "under test, at every chunking, and store the rows of the run.",
    )
    parser.add_argument(
        "--parser",
        default=DEFAULT_PARSER,
        help="reply (the project's parser), oracle[:VERSION], llama-server[:PATH], 'cmd:COMMAND ARGS' or "
        "pkg.module:factory "
        f"(module dotted or a path/to/file.py; default {DEFAULT_PARSER})",
    )
    parser.add_argument(
        "--parser-name",
        metavar="NAME",
        help="the parser's identity in the run's stamp, which gate and diff compare (default: the name its "
        "info op or Python object gives, else its spec)",
    )
    add_selection_flags(parser)
    parser.add_argument(
        "--chunking",
        metavar="C,...",
        help=f"chunkings to run, each on every reply (default: the profile's, on the replies its rules pick); "
        f"from {', '.join(chunkings.FIXED)}, random:SEED, tokens:K:SEED",
    )
    parser.add_argument(
        "--keep-profile-rules",
        action="store_true",
        help="the --chunking chunkings run only where the profile runs them (its reply length limits and "
        "origins per mode) rather than on every reply",
    )
    parser.add_argument("--corpus", metavar="FILE", type=Path, help="replies from a corpus file")
    parser.add_argument(
        "--source",
        default="catalog",
        metavar="MODULE:OBJECT",
        help="where sessions and replies come from (default: corpora.catalog)",
    )
    parser.add_argument(
        "--only-failing",
        metavar="RUN",
        type=Path,
        help="rerun only the rows that failed in an earlier run (its directory)",
    )
    parser.add_argument(
        "--case",
        metavar="CASE_ID",
        action="append",
        help="run only this case (repeatable; narrow with --templates and --mode to plan fewer sessions)",
    )
    parser.add_argument(
        "-n",
        "--numprocesses",
        metavar="N",
        default="1",
        help="pytest-xdist worker processes (a number or auto; default 1; 0 runs sessions in this process, "
        "where a parser that kills its process ends the run)",
    )
    parser.add_argument("--out", type=Path, help="run directory (default reports/runs/PROFILE-PARSER)")
    parser.add_argument(
        "--expectations",
        metavar="DIR",
        type=Path,
        help="the parser's expectations: a directory holding any of policies.toml, known_divergences.toml, "
        "baseline/ (quick runs) and baseline-full/ (full runs), none required; make a baseline with "
        "'chatparity gate --update --baseline DIR/baseline RUN' (default: the project's for reply, none for "
        "other parsers); recorded in the run's stamp",
    )
    parser.add_argument(
        "--junitxml",
        metavar="FILE",
        type=Path,
        help="write a JUnit XML file: a test case per session, failing when a row fails beyond expectations",
    )
    add_oracle_flags(parser)
    parser.add_argument(
        "--oracle",
        metavar="FILE",
        type=Path,
        help="read llama.cpp's answers from an export ('chatparity export') instead of llama.cpp, which is "
        "neither built nor started: only the export's sessions run, and a case or chunking it lacks is "
        "oracle_crashed",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per parser or oracle call (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--pytest-args", default="", help="extra pytest arguments, e.g. --pytest-args='-x --durations=10'"
    )
    return parser


def failing_rows(run: Path) -> tuple[tuple[str, str, str], ...]:
    """The (case_id, chunking, session_id) of the rows that did not cleanly match in an earlier run."""
    try:
        connection = store.open_store(run)
    except store.StoreError as error:
        raise ValueError(f"--only-failing {run}: {error}") from None
    try:
        return store.failing_rows(connection)
    except sqlite3.DatabaseError as error:
        raise ValueError(f"--only-failing {run}: not a readable run store: {error}") from None
    finally:
        connection.close()


def default_out(profile: str, parser: str) -> Path:
    """reports/runs/PROFILE-PARSER, the parser spec made file-name safe."""
    return RUNS_DIR / f"{profile}-{re.sub(r'[^A-Za-z0-9._-]+', '_', parser).strip('_')}"


def make_config(options: argparse.Namespace) -> SweepConfig:
    """The sweep config of the parsed flags (chunkings validated, the failing rows of --only-failing read)."""
    spec = parser_spec(options.parser)
    if options.parser_name is not None and not options.parser_name.strip():
        raise ValueError("--parser-name: expected a non-empty name")
    load_source(options.source)
    if options.corpus:
        check_corpus(options.corpus)
    names = chunkings.parse_list(options.chunking) if options.chunking else ()
    if options.keep_profile_rules and not names:
        raise ValueError("--keep-profile-rules only goes with --chunking")
    keep_rules = options.keep_profile_rules
    if spec.kind is ParserKind.SERVER and not names:
        names, keep_rules = server_chunkings(options.profile), True
    failing = failing_rows(options.only_failing) if options.only_failing else None
    if options.case and failing is not None:
        raise ValueError("--case and --only-failing cannot be combined")
    if failing is not None and not names:
        names = tuple(sorted({chunking for _, chunking, _ in failing}))
    selected = None if failing is None else tuple((case, chunking) for case, chunking, _ in failing)
    if options.case:
        every = names or rules_of(options.profile).chunkings
        selected = tuple((case, chunking) for case in options.case for chunking in every)
    expectations = expectations_directory(spec, options.expectations)
    try:
        policies_in(expectations_path(expectations))
        divergences_in(expectations_path(expectations))
    except (PolicyFileError, DivergenceFileError) as error:
        raise ValueError(str(error)) from None
    out = (options.out or default_out(options.profile, options.parser)).resolve()
    cache = None if options.no_oracle_cache else str((options.oracle_cache or default_directory()).resolve())
    sessions = None if failing is None else tuple(sorted({session for _, _, session in failing}))
    if options.oracle:
        sessions = export_sessions(options, spec, sessions)
        cache = None
    return SweepConfig(
        parser=options.parser,
        profile=options.profile,
        out=str(out),
        parser_name=options.parser_name,
        chunkings=names,
        keep_profile_rules=keep_rules,
        templates=options.templates,
        family=options.family,
        mode=options.mode,
        corpus=str(options.corpus.resolve()) if options.corpus else None,
        source=options.source,
        oracle_version=options.oracle_version,
        oracle_cache=cache,
        timeout=options.timeout,
        only_failing=str(options.only_failing) if options.only_failing else None,
        expectations=expectations,
        selected=selected,
        selected_sessions=sessions,
        oracle_export=str(options.oracle.resolve()) if options.oracle else None,
    )


def export_sessions(options: argparse.Namespace, spec: ParserSpec, sessions: tuple[str, ...] | None
                    ) -> tuple[str, ...]:
    """The sessions a sweep against the export `--oracle` runs: the export's (those of `sessions` among them,
    where a selection names some); a damaged export, another profile's or a parser that runs llama.cpp itself
    is a ValueError."""
    if spec.kind in (ParserKind.ORACLE, ParserKind.SERVER):
        raise ValueError(f"--oracle: --parser {options.parser} runs llama.cpp itself; an export holds only the "
                         "answers the sweep's own oracle reads")
    export = read_export(options.oracle)
    if export.header["profile"] != options.profile:
        raise ValueError(f"--oracle {options.oracle} holds the cases of the {export.header['profile']} profile: "
                         f"sweep it with --profile {export.header['profile']}")
    held = set(export.sessions)
    return tuple(session for session in sessions if session in held) if sessions is not None else export.sessions


def server_chunkings(profile: str) -> tuple[str, ...]:
    """The profile's chunkings llama-server can be judged at: `whole` and those cutting at its tokens (its
    stream only shows states between tokens)."""
    return tuple(name for name in rules_of(profile).chunkings if name == "whole" or chunkings.needs_tokens(name))


def check_corpus(path: Path) -> None:
    """Raise a CorpusFileError naming every bad line of a corpus file, before any session runs."""
    read_corpus(path, set(load_index()))


def pytest_arguments(config_file: Path, options: argparse.Namespace) -> list[str]:
    """The pytest command line of a sweep: only the plugins a sweep needs (no installed plugin is loaded on its
    own, and none collects garbage when the session ends)."""
    out = config_file.parent
    args = [
        str(config_file),
        "--disable-plugin-autoload",
        "-p",
        "xdist.plugin",
        "-p",
        "harness.sweep_plugin",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:unraisableexception",
        f"--rootdir={out}",
        f"--confcutdir={out}",
        "-o",
        "addopts=",
        "--assert=plain",
        "-n",
        options.numprocesses,
        f"--max-worker-restart={MAX_WORKER_RESTARTS}",
    ]
    return args + options.pytest_args.split()


class BeforeTheLoop:
    """A pytest plugin running `job` once the session has started (xdist's workers are then starting up),
    before the run loop: this process's work that can wait until the workers are under way."""

    def __init__(self, job: Callable[[], object]) -> None:
        self.job = job

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Run the job, then the loop."""
        self.job()
        return (yield)


def sweep(config: SweepConfig, options: argparse.Namespace, prepare: Callable[[], object] | None = None,
          plugins: Sequence[object] = ()) -> int:
    """Run the pytest session of a sweep from a scratch directory (nothing enters --out before the store);
    `prepare` runs in this process once the workers are starting; `plugins` join the session."""
    try:
        scratch = Path(tempfile.mkdtemp(prefix=temporary_path(Path(), "sweep-").name))
    except OSError as error:
        raise fault(tempfile.gettempdir(), error, TMPDIR_REMEDY) from None
    try:
        config_file = scratch / CONFIG_FILE
        try:
            config.write(config_file)
        except OSError as error:
            raise fault(scratch, error, TMPDIR_REMEDY) from None
        joined = [*plugins, *([BeforeTheLoop(prepare)] if prepare is not None else [])]
        return int(pytest.main(pytest_arguments(config_file, options), plugins=joined))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str], prog: str = "chatparity sweep", publish: Callable[[Path], str] | None = None,
         prepare: Callable[[], object] | None = None, plugins: Sequence[object] = ()) -> int:
    """Parse the flags and run the sweep, holding its run directory; `publish` writes the run's reports and
    returns its summary; `prepare` (getting ready to publish) runs while the workers start; `plugins` join the
    pytest session. Wrong input, and a run directory or a disk that will not take the run, is one line and exit
    status 2."""
    options = arguments(prog).parse_args(argv)
    try:
        config = make_config(options)
    except ValueError as error:
        for line in str(error).splitlines():
            print(f"{prog}: {line}", file=sys.stderr)
        return 2
    try:
        with RunDirectory(Path(config.out)):
            remove_stale(Path(tempfile.gettempdir()))
            build_oracles(config)
            build_server(config)
            return swept(config, options, prog, publish, prepare, plugins)
    except ServerBuildError as failed:
        print(f"{prog}: {failed}", file=sys.stderr)
        return SERVER_BUILD_FAILED
    except (FileFault, BuildError, SourceError) as fault:
        print(f"{prog}: {fault}", file=sys.stderr)
        return 2


def build_oracles(config: SweepConfig) -> None:
    """Build the oracle the sweep reads with (and the one it tests, for `--parser oracle:V`) before its workers
    start, where the build's progress and directory show (a worker's output is pytest's to capture); nothing
    when CHATPARITY_ORACLE_BINARY names one or the sweep reads an export."""
    if os.environ.get(BINARY_ENV) or config.oracle_export:
        return
    spec = parser_spec(config.parser)
    versions = {resolve_version(config.oracle_version)}
    if spec.kind is ParserKind.ORACLE:
        versions.add(spec.target)
    for version in sorted(versions):
        ensure_binary(version)


def build_server(config: SweepConfig) -> None:
    """Build the pinned llama-server before the workers start, for `--parser llama-server` (not for a binary
    the user names)."""
    spec = parser_spec(config.parser)
    if spec.kind is ParserKind.SERVER and not spec.target:
        ensure_server(config.oracle_version)


def swept(config: SweepConfig, options: argparse.Namespace, prog: str, publish: Callable[[Path], str] | None,
          prepare: Callable[[], object] | None, plugins: Sequence[object]) -> int:
    """Run the sweep, then publish what it stored; its exit status."""
    status = sweep(config, options, prepare, plugins)
    out = Path(config.out)
    if status == NOTHING_STORED:
        return 2
    if status == pytest.ExitCode.INTERRUPTED:
        print(f"{prog}: interrupted; no store written (any earlier store in {out} is untouched)")
        return status
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        return status
    if publish is not None:
        print(publish(out))
    print(f"run stored in {out / store.STORE_NAME}; tables in {out / 'report.md'} and {out / 'report.html'}")
    log = out / f"{STDERR_LOG}.log"
    if log.is_file():
        print(f"the parser wrote {log.stat().st_size} bytes to its stderr: {log}")
    return status
