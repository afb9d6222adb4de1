"""`chatparity mutate`: a mutation check of a parser against the sweep and gate (or any test command)."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from harness.mutants import Mutant
from reports.mutate import (
    MutationError,
    Result,
    Settings,
    all_mutants,
    equivalents_file,
    mutation_check,
    sample,
    score,
    snapshot_project,
    write_report,
)

DEFAULT_SOURCE = "reply"
DESCRIPTION = (
    "Make one-change mutants of a parser's source (a small operator set: comparisons, and/or, not, arithmetic, "
    "constants, conditions, deleted calls, returns; line operators for other languages), apply each to a "
    "temporary copy of the source (never to the working tree), sweep the copy with the mutated module imported "
    "first, restricted to the templates the mutated code serves (a module under syntaxes/ named after an index "
    "syntax serves that syntax's templates; of those, the templates whose sessions call the function holding the "
    "change, traced in a sweep of the unmutated parser's whole reads; at most --max-templates of them), and gate "
    "it against a sweep of the unmutated parser; the time the run should take is printed once that sweep is "
    "done. A mutant is "
    "killed when the gate fails. With --test-command, the command decides instead (non-zero exit: killed); "
    "{dir} is the mutated copy of --source, {out} a directory for its run, {templates} the served templates' "
    "globs; a Python copy is first on PYTHONPATH and CHATPARITY_MUTANT_DIR names its parent."
)


def arguments(prog: str) -> argparse.ArgumentParser:
    """The mutate command's flags."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    parser.add_argument(
        "--source",
        type=Path,
        default=Path(DEFAULT_SOURCE),
        help="the parser's source directory, copied per mutant (default: reply)",
    )
    parser.add_argument(
        "--package",
        help="the name the copies of --source are imported under (default: the --source directory's name); "
        "e.g. --source /tmp/frozen/reply_src --package reply mutates a frozen copy of reply",
    )
    parser.add_argument(
        "--files", default="*.py", help="file-name glob of the files to mutate (default: *.py)"
    )
    parser.add_argument("--parser", default="reply", help="the parser spec the sweep runs (default: reply)")
    parser.add_argument("--profile", default="quick", help="the sweep profile (default: quick)")
    parser.add_argument(
        "--templates", help="template file-name globs, comma-separated (default: those served)"
    )
    parser.add_argument("--mode", help="mode label glob")
    parser.add_argument("--oracle-cache", help="the oracle answer cache (default: the sweep's)")
    parser.add_argument(
        "--sample", type=int, help="check this many mutants, drawn with --seed (default: all)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the seed of --sample (default: 0)")
    parser.add_argument("--only", help="comma-separated mutant ids to check (after --sample)")
    parser.add_argument(
        "--equivalents",
        type=Path,
        help="a TOML file of [[equivalent]] entries (id, reason): mutants known equivalent",
    )
    parser.add_argument(
        "--test-command", help="decide each mutant with this shell command instead of the gate"
    )
    parser.add_argument("-j", "--jobs", type=int, default=2, help="mutants checked at once (default: 2)")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds a mutant's sweep may take at most (default: 1800); a sweep also ends as a "
                             "timeout past 5 times the unmutated parser's time for its templates (at least 60 s)")
    parser.add_argument(
        "--max-templates",
        type=int,
        help="sweep each mutant over at most this many of the templates whose sessions run its function, "
        "spread over syntaxes (default: all of them; a nightly run: e.g. 4)",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("reports/runs/mutate"),
        help="where mutants.md, mutants.json and the logs go (default: reports/runs/mutate)",
    )
    return parser


def chosen(args: argparse.Namespace, source: Path) -> list[Mutant]:
    """The mutants of `source` the flags select."""
    mutants = sample(all_mutants(source, args.files), args.sample, args.seed)
    if args.only:
        wanted = set(args.only.split(","))
        mutants = [mutant for mutant in mutants if mutant.id in wanted]
        missing = wanted - {mutant.id for mutant in mutants}
        if missing:
            raise MutationError(f"--only: no mutant {', '.join(sorted(missing))} in the selection")
    return mutants


def printed(result: Result) -> None:
    """One line per checked mutant, as it finishes."""
    print(f"{result.status.value:>10} {result.id} {result.label} ({result.seconds:.0f}s)", flush=True)


def main(argv: list[str], prog: str) -> int:
    """Run the mutation check; exit 1 when a mutant survived, 2 on wrong input."""
    args = arguments(prog).parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chatparity-mutate-") as temporary:
        return checked(args, Path(temporary), prog)


def checked(args: argparse.Namespace, snapshot_root: Path, prog: str) -> int:
    """The mutation check of a snapshot of the source taken under `snapshot_root`, so edits made to the
    source meanwhile change neither the mutants nor the reference sweep."""
    try:
        if not args.source.is_dir():
            raise MutationError(f"--source {args.source}: no such directory")
        if args.max_templates is not None and args.max_templates < 1:
            raise MutationError(f"--max-templates {args.max_templates}: must be at least 1")
        snapshot = Path(
            shutil.copytree(
                args.source,
                snapshot_root / (args.package or args.source.resolve().name),
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        )
        mutants = chosen(args, snapshot)
        if args.list:
            for mutant in mutants:
                print(f"{mutant.id} {mutant.label}")
            return 0
        project = snapshot_project(snapshot_root / "project")
        settings = Settings(
            project=project,
            source=snapshot,
            out=args.out.resolve(),
            parser=args.parser,
            profile=args.profile,
            templates=args.templates,
            mode=args.mode,
            oracle_cache=args.oracle_cache,
            test_command=args.test_command,
            timeout=args.timeout,
            jobs=args.jobs,
            max_templates=args.max_templates,
        )
        results = mutation_check(
            mutants, settings, equivalents_file(args.equivalents), printed, lambda line: print(line, flush=True)
        )
    except MutationError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    header = {"source": str(args.source), "files": args.files, "sample": args.sample, "seed": args.seed}
    json_path, md_path = write_report(results, settings, header)
    totals = score(results)
    print(
        f"{prog}: {totals['mutants']} mutants: {totals['killed']} killed, {totals['timeout']} timed out, "
        f"{totals['survived']} survived, {totals['equivalent']} equivalent; score {totals['score']}% "
        f"({md_path}, {json_path})"
    )
    return 1 if totals["survived"] else 0
