"""`chatparity sweep`: run the oracle and a parser over the corpus in a pytest session, store the rows."""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from harness import chunkings, store
from harness.oracle_cache import default_directory
from harness.parsers import DEFAULT_PARSER, DEFAULT_TIMEOUT, check_spec
from harness.profiles import PROFILES
from harness.sources import load_source
from harness.sweep_config import CONFIG_FILE, SweepConfig

RUNS_DIR = Path("reports") / "runs"
FAILING_SQL = """
SELECT case_id, chunking, session_id FROM rows
WHERE outcome != 'match' OR consistent = 0 OR monotonic = 0 OR clean = 0 OR snapshot_parity = 0
ORDER BY case_id, chunking
"""


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
        help="reply (the project's parser), oracle[:VERSION], 'cmd:COMMAND ARGS' or pkg.module:factory "
        f"(module dotted or a path/to/file.py; default {DEFAULT_PARSER})",
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    parser.add_argument("--templates", metavar="GLOB", help="only templates whose file name matches")
    parser.add_argument("--family", help="only templates of this family")
    parser.add_argument("--mode", metavar="GLOB", help="only modes whose label matches, e.g. 'think/*'")
    parser.add_argument(
        "--chunking",
        metavar="C,...",
        help=f"chunkings to run (default: the profile's); from {', '.join(chunkings.FIXED)}, random:SEED",
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
    parser.add_argument("-n", "--numprocesses", metavar="N", help="pytest-xdist workers (a number or auto)")
    parser.add_argument("--out", type=Path, help="run directory (default reports/runs/PROFILE-PARSER)")
    parser.add_argument("--oracle-version", help="llama-cpp-python version of the oracle (default: the pin)")
    parser.add_argument(
        "--oracle-cache", type=Path, help=f"oracle answer cache (default {default_directory()})"
    )
    parser.add_argument("--no-oracle-cache", action="store_true", help="always ask llama.cpp")
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
    file = run / store.STORE_NAME if run.is_dir() else run
    if not file.exists():
        raise ValueError(f"--only-failing {run}: no run store at {file}")
    connection = sqlite3.connect(file)
    try:
        return tuple(connection.execute(FAILING_SQL))
    finally:
        connection.close()


def default_out(profile: str, parser: str) -> Path:
    """reports/runs/PROFILE-PARSER, the parser spec made file-name safe."""
    return RUNS_DIR / f"{profile}-{re.sub(r'[^A-Za-z0-9._-]+', '_', parser).strip('_')}"


def make_config(options: argparse.Namespace) -> SweepConfig:
    """The sweep config of the parsed flags (chunkings validated, the failing rows of --only-failing read)."""
    check_spec(options.parser)
    load_source(options.source)
    names = chunkings.parse_list(options.chunking) if options.chunking else ()
    failing = failing_rows(options.only_failing) if options.only_failing else None
    out = (options.out or default_out(options.profile, options.parser)).resolve()
    cache = None if options.no_oracle_cache else str((options.oracle_cache or default_directory()).resolve())
    return SweepConfig(
        parser=options.parser,
        profile=options.profile,
        out=str(out),
        chunkings=names,
        templates=options.templates,
        family=options.family,
        mode=options.mode,
        corpus=str(options.corpus.resolve()) if options.corpus else None,
        source=options.source,
        oracle_version=options.oracle_version,
        oracle_cache=cache,
        timeout=options.timeout,
        only_failing=str(options.only_failing) if options.only_failing else None,
        selected=None if failing is None else tuple((case, chunking) for case, chunking, _ in failing),
        selected_sessions=None if failing is None else tuple(sorted({session for _, _, session in failing})),
    )


def pytest_arguments(config_file: Path, options: argparse.Namespace) -> list[str]:
    """The pytest command line of a sweep."""
    out = config_file.parent
    args = [
        str(config_file),
        "-p",
        "harness.sweep_plugin",
        "-p",
        "no:cacheprovider",
        f"--rootdir={out}",
        f"--confcutdir={out}",
        "-o",
        "addopts=",
        "--assert=plain",
        "-p",
        "no:benchmark",
    ]
    if options.numprocesses is not None:
        args += ["-n", options.numprocesses]
    return args + options.pytest_args.split()


def publish(run: Path) -> str:
    """Write the run's report files (tables, HTML, coverage) and return its one-screen summary."""
    from reports.publish import write_report
    from reports.summary import summarize

    write_report(run)
    return summarize(run)


def sweep(config: SweepConfig, options: argparse.Namespace) -> int:
    """Run the pytest session of a sweep; the exit status of pytest (0 when every session ran)."""
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    config_file = out / CONFIG_FILE
    config.write(config_file)
    return int(pytest.main(pytest_arguments(config_file, options)))


def main(argv: list[str], prog: str = "chatparity sweep") -> int:
    """Parse the flags, run the sweep, write the reports and print the summary."""
    options = arguments(prog).parse_args(argv)
    try:
        config = make_config(options)
    except ValueError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    status = sweep(config, options)
    out = Path(config.out)
    if status == pytest.ExitCode.INTERRUPTED:
        print(f"{prog}: interrupted; no store written (any earlier store in {out} is untouched)")
        return status
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        return status
    print(publish(out))
    print(f"run stored in {out / store.STORE_NAME}; tables in {out / 'report.md'} and {out / 'report.html'}")
    return status
