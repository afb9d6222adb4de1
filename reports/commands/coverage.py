"""`chatparity coverage RUN [--out DIR]`: template and family coverage, and what the parser cannot handle."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.known_divergences import DivergenceFileError
from harness.policies import PolicyFileError
from reports.coverage import coverage, coverage_markdown
from reports.divergences import classify_run
from reports.publish import write_coverage
from reports.runs import RunError, load_run


def main(argv: list[str], prog: str) -> int:
    """Print the coverage markdown of a run and write it as markdown, CSV and JSON."""
    parser = argparse.ArgumentParser(prog=prog, description="Report template coverage of a run.")
    parser.add_argument("run", type=Path, help="the run directory (holding rows.sqlite)")
    parser.add_argument("--out", type=Path, help="where to write coverage.* (default: the run directory)")
    args = parser.parse_args(argv)
    try:
        run = load_run(args.run)
        verdict = classify_run(run)
    except (RunError, DivergenceFileError, PolicyFileError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    covered = coverage(run, verdict.rows)
    written = write_coverage(covered, args.out if args.out is not None else run.directory)
    print(coverage_markdown(covered))
    print("wrote:", *[str(path) for path in written], sep="\n  ")
    return 0
