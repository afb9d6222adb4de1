"""`chatparity report RUN [--out DIR]`: tables, HTML page, summaries, oracle defects and coverage."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chatparity.files import FileFault
from harness.run_directory import RunDirectory
from reports.divergences import DivergenceFileError
from reports.publish import publish
from reports.runs import RunError


def main(argv: list[str], prog: str) -> int:
    """Write every report file of a run and print its terminal summary."""
    parser = argparse.ArgumentParser(prog=prog, description="Write the report files of a run.")
    parser.add_argument("run", type=Path, help="the run directory (holding rows.sqlite)")
    parser.add_argument("--out", type=Path, help="where to write the reports (default: the run directory)")
    parser.add_argument(
        "--divergences",
        type=Path,
        help="the known-divergences file (default: those of the run's parser, as its stamp names them)",
    )
    args = parser.parse_args(argv)
    try:
        with RunDirectory(args.out or args.run, "--out" if args.out else "RUN"):
            published = publish(args.run, args.out, args.divergences)
        print(published.summary)
    except (RunError, DivergenceFileError, FileFault) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    print("wrote:", *[str(path) for path in published.files], sep="\n  ")
    return 0
