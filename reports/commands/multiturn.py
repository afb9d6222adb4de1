"""`chatparity multiturn`: the three-turn append check of every template and mode, written as tables."""

from __future__ import annotations

import argparse
import sys
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from harness.multiturn import run_all
from harness.oracle_reads import OracleIdentity
from harness.parser_specs import DEFAULT_PARSER, load_parser, parser_spec
from harness.parsers import DEFAULT_TIMEOUT
from harness.stamp import template_index_hash
from oracle.client import Oracle
from reports.multiturn import default_out, headline, summarise, write_multiturn
from reports.template_behaviours import DEFAULT_PATH, BehaviourFileError, load_behaviours
from templates.index import load_index

NO_PARSER = "none"


def arguments(prog: str) -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run three turns per template and mode, each reply the template's own and read back by "
        "llama.cpp, and check that every prompt is an exact append of the last prompt plus the reply.",
    )
    parser.add_argument("--templates", metavar="GLOB", help="only templates whose file name matches")
    parser.add_argument("--family", help="only templates of this family")
    parser.add_argument("--mode", metavar="GLOB", help="only modes whose label matches, e.g. 'think/*'")
    parser.add_argument(
        "--parser",
        default=DEFAULT_PARSER,
        help=f"the parser under test that also reads each reply (default {DEFAULT_PARSER}; '{NO_PARSER}' for none)",
    )
    parser.add_argument(
        "--out", type=Path, help="where to write multiturn.* (default reports/runs/multiturn-PARSER)"
    )
    parser.add_argument("--oracle-version", metavar="V", help="llama-cpp-python version of the oracle")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per oracle or parser call"
    )
    parser.add_argument(
        "--behaviours", type=Path, default=DEFAULT_PATH, help="the known template behaviours file"
    )
    return parser


def make_stamp(options: argparse.Namespace, revision: str) -> dict[str, Any]:
    """What the run was made with (no clock: identical runs write identical files)."""
    oracle = OracleIdentity.of(options.oracle_version)
    return {
        "llama_cpp_commit": oracle.llama_cpp_commit,
        "sdist_sha256": oracle.sdist_sha256,
        "oracle_build": oracle.build_id,
        "llama_cpp_python_version": oracle.version,
        "parser": options.parser,
        "parser_revision": revision,
        "template_index_hash": template_index_hash(),
        "selection": {"templates": options.templates, "family": options.family, "mode": options.mode},
        "known_behaviours": str(options.behaviours),
    }


def main(argv: list[str], prog: str) -> int:
    """Run the loops, write the tables, print the headline and the files written."""
    options = arguments(prog).parse_args(argv)
    try:
        behaviours = load_behaviours(options.behaviours)
        spec = None if options.parser == NO_PARSER else parser_spec(options.parser)
    except (BehaviourFileError, ValueError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    entries = [
        entry
        for name, entry in sorted(load_index().items())
        if (options.templates is None or fnmatch(name, options.templates))
        and (options.family is None or entry.family == options.family)
    ]
    if not entries:
        print(
            f"{prog}: no template matches --templates {options.templates!r} --family {options.family!r}",
            file=sys.stderr,
        )
        return 2
    parser = load_parser(spec, options.timeout) if spec is not None else None
    try:
        revision = parser.revision() if parser is not None else ""
        with Oracle(version=options.oracle_version, timeout=options.timeout) as oracle:
            rows = run_all(entries, oracle, parser, options.mode, options.oracle_version)
    finally:
        if parser is not None:
            parser.close()
    if not rows:
        print(f"{prog}: no mode matches --mode {options.mode!r}", file=sys.stderr)
        return 2
    tables = summarise([row.to_json() for row in rows], behaviours)
    out = options.out if options.out is not None else default_out(options.parser)
    written = write_multiturn(tables, make_stamp(options, revision), out)
    print(headline(tables))
    print("wrote:", *[str(path) for path in written], sep="\n  ")
    return 0
