"""`chatparity diff BASE HEAD` or `chatparity diff --git BASE_REV [HEAD_REV]`: compare two runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reports.diff import Change, PinMismatch, diff_json, diff_markdown, diff_runs, new_failures, totals
from reports.expectations import ParserMismatch
from reports.revisions import RevisionError, repository_root, run_name, sweep_at
from reports.runs import RunError, load_run


def arguments(prog: str) -> argparse.ArgumentParser:
    """The diff command's flags."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Compare a base run with a head run (two run directories), or sweep the parser at two git "
            "revisions (--git BASE_REV [HEAD_REV]; without HEAD_REV the working tree) and compare those."
        ),
    )
    parser.add_argument(
        "runs", nargs="*", help="BASE HEAD run directories, or BASE_REV [HEAD_REV] with --git"
    )
    parser.add_argument("--git", action="store_true", help="the positional arguments are git revisions")
    parser.add_argument("--json", type=Path, help="write the full diff as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the PR-comment markdown here")
    parser.add_argument("--full-report", default="", help="where the full report is, quoted in the markdown")
    parser.add_argument(
        "--allow-pin-mismatch",
        action="store_true",
        help="compare runs whose llama.cpp commit, template index or profile differ",
    )
    parser.add_argument(
        "--allow-other-parser", action="store_true", help="compare runs of two different parsers"
    )
    sweep = parser.add_argument_group("with --git: the sweep run at each revision")
    sweep.add_argument("--repo", type=Path, help="the git repository (default: the one holding the cwd)")
    sweep.add_argument(
        "--work", type=Path, help="where the two runs go (default: REPO/reports/runs/diff-BASE-HEAD)"
    )
    sweep.add_argument("--parser", help="the parser spec passed to the sweep")
    sweep.add_argument("--profile", help="quick or full")
    sweep.add_argument("--templates", help="template file name glob")
    sweep.add_argument("--family", help="only templates of this family")
    sweep.add_argument("--mode", help="mode label glob")
    sweep.add_argument("--chunking", help="chunkings to run, each on every reply (default: the profile's)")
    sweep.add_argument(
        "--keep-profile-rules", action="store_true", help="the --chunking chunkings run where the profile runs them"
    )
    sweep.add_argument(
        "--oracle-cache", help="the oracle answer cache both sweeps share (default: the sweep's)"
    )
    sweep.add_argument("--corpus", metavar="FILE", help="sweep the replies of this corpus file alone")
    sweep.add_argument("--oracle-version", help="llama-cpp-python version of the oracle (default: the pin)")
    sweep.add_argument("-n", "--numprocesses", dest="workers", metavar="N", help="pytest-xdist workers")
    return parser


def sweep_args(args: argparse.Namespace) -> list[str]:
    """The flags passed through to `python -m chatparity sweep`."""
    flags = []
    for flag, value in (
        ("--parser", args.parser),
        ("--profile", args.profile),
        ("--templates", args.templates),
        ("--family", args.family),
        ("--mode", args.mode),
        ("--chunking", args.chunking),
        ("--oracle-cache", args.oracle_cache),
        ("--corpus", args.corpus),
        ("--oracle-version", args.oracle_version),
        ("-n", args.workers),
    ):
        if value is not None:
            flags += [flag, value]
    return flags + (["--keep-profile-rules"] if args.keep_profile_rules else [])


def git_runs(args: argparse.Namespace, prog: str) -> tuple[Path, Path]:
    """Sweep the two revisions and return their run directories."""
    if len(args.runs) not in (1, 2):
        raise RevisionError("--git takes BASE_REV and optionally HEAD_REV")
    base_rev, head_rev = args.runs[0], (args.runs[1] if len(args.runs) == 2 else None)
    repo = repository_root(args.repo or Path.cwd())
    work = args.work or repo / "reports" / "runs" / f"diff-{run_name(base_rev)}-{run_name(head_rev)}"
    runs = []
    for side, revision in (("base", base_rev), ("head", head_rev)):
        print(f"{prog}: sweeping {side} at {revision or 'the working tree'}", file=sys.stderr)
        runs.append(sweep_at(repo, revision, work / side, sweep_args(args)))
    return runs[0], runs[1]


def main(argv: list[str], prog: str) -> int:
    """Print the markdown diff of two runs; write JSON and markdown files when asked."""
    args = arguments(prog).parse_args(argv)
    try:
        if args.git:
            base_dir, head_dir = git_runs(args, prog)
        elif len(args.runs) == 2:
            base_dir, head_dir = Path(args.runs[0]), Path(args.runs[1])
        else:
            print(
                f"{prog}: give BASE and HEAD run directories, or --git BASE_REV [HEAD_REV]", file=sys.stderr
            )
            return 2
        base, head = load_run(base_dir), load_run(head_dir)
        diff = diff_runs(base, head, args.allow_pin_mismatch, args.allow_other_parser)
    except (RunError, RevisionError, PinMismatch, ParserMismatch) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    for warning in diff.warnings:
        print(f"{prog}: {warning}", file=sys.stderr)
    for run in (base, head):
        for item in run.lost:
            print(f"{prog}: WARNING: {run.directory} lost {item}; its rows are missing", file=sys.stderr)
    full_report = args.full_report or (str(args.json) if args.json else str(head.directory / "report.html"))
    markdown = diff_markdown(diff, str(base_dir), str(head_dir), full_report)
    print(markdown)
    if args.markdown:
        args.markdown.write_text(markdown, encoding="utf-8")
    if args.json:
        args.json.write_text(
            json.dumps(diff_json(diff, str(base_dir), str(head_dir)), indent=1, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    counts = totals(diff)
    if counts["rows"] == counts[Change.NEW.value] + counts[Change.GONE.value]:
        print(f"{prog}: nothing compared: {base_dir} and {head_dir} share no row", file=sys.stderr)
        return 1
    failing_new = new_failures(diff)
    if not failing_new.empty:
        print(f"{prog}: {len(failing_new)} new rows fail (a parser bug, an error or a check it breaks)")
    return 1 if counts[Change.REGRESSION.value] or not failing_new.empty else 0
