"""`chatparity show CASE_ID [RUN]`: one case of a run, its request, reply, readings and replay command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.commands.gate import latest_run
from reports.runs import RunError, load_run
from reports.show import case_rows, describe, session_request


def arguments(prog: str) -> argparse.ArgumentParser:
    """The show command's flags."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Print one case of a run: template, mode, messages, tools, the reply, llama.cpp's and the "
        "parser's readings, the first difference, and a command that replays just that case.",
    )
    parser.add_argument("case_id", metavar="CASE_ID", help="the case id (as diff, gate and reports print it)")
    parser.add_argument(
        "run", nargs="?", type=Path, help="the run directory (default: the newest under reports/runs)"
    )
    return parser


def main(argv: list[str], prog: str = "chatparity show") -> int:
    """Print the case, or exit 2 naming what is wrong."""
    args = arguments(prog).parse_args(argv)
    try:
        run = load_run(args.run or latest_run(Path("reports/runs")))
        first = case_rows(run, args.case_id).iloc[0]
        request = session_request(run, first)
    except (RunError, ValueError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    print(describe(run, args.case_id, request))
    return 0
