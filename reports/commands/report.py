"""`chatparity report RUN [--out DIR]`: tables, HTML page, summaries, oracle defects and coverage."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chatparity.files import FileFault
from harness.known_divergences import DivergenceFileError
from harness.policies import PolicyFileError
from harness.run_directory import RunDirectory
from reports.baselines import BaselineError
from reports.publish import publish
from reports.runs import RunError


def main(argv: list[str], prog: str) -> int:
    """Write every report file of a run and print its terminal summary."""
    parser = argparse.ArgumentParser(prog=prog, description="Write the report files of a run.")
    parser.add_argument("run", type=Path, help="the run directory (holding rows.sqlite)")
    parser.add_argument("--out", type=Path, help="where to write the reports (default: the run directory)")
    args = parser.parse_args(argv)
    try:
        with RunDirectory(args.out or args.run, "--out" if args.out else "RUN"):
            published = publish(args.run, args.out)
        print(published.summary)
    except (RunError, DivergenceFileError, PolicyFileError, BaselineError, FileFault) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    print("wrote:", *[str(path) for path in published.files], sep="\n  ")
    return 0
