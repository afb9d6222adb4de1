"""Whether a mutant of reply/ changes what a reader is built from: the syntax chosen, the grammar (every parser
node, literal and predicate), the markers and the reasoning tags, for every session a profile plans (template,
mode and conversation). A change to code that runs only while a reader is built and that alters none of them
cannot be told apart by any reply of those sessions: an equivalent on the pinned templates, which
`chatparity mutate` finds among its survivors (`reports.built_alike`).

Run: python3 -m reports.same_grammars ID [ID ...] [--templates GLOB] [--profile quick|full]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from corpora.catalog import plan
from harness.mutants import Mutant, copy_environment, mutants_of
from reply.fingerprint import fingerprint

PROJECT = Path(__file__).resolve().parent.parent
STACK = 1 << 29
RECURSION = 20_000
"""The recursion limit of a description: deep enough for every reader, shallow enough that a template whose
render recurses without end (Hermes 2 Pro on a nullable type list) fails at once."""


def readers(templates: str, profile: str = "quick") -> dict[str, str]:
    """Per session the profile plans (template, mode and conversation): what its reader is built from."""
    from reply.reader import open_reader

    found = {}
    for planned in plan(profile, templates=templates):
        session = planned.session
        try:
            reader = open_reader(session)
            built = (f"{reader.syntax.name} {reader.template.route} {reader.template.reasoning!r} "
                     f"{fingerprint(reader.arena.root)} {reader.markers} {reader.call_starts} {reader.prefix!r}")
        except Exception as error:  # noqa: BLE001 - a refusal or a crash is what was built
            built = f"{type(error).__name__}: {error}"
        found[f"{session.template} {session.mode.label} {session.conversation}"] = built
    return found


def in_child(root: Path, templates: str, profile: str, project: Path = PROJECT) -> dict[str, str]:
    """`readers` of the reply package under `root` (a directory holding reply/), in a process of its own
    started from `project`."""
    env = copy_environment(root, project)
    done = subprocess.run([sys.executable, "-m", "reports.same_grammars", "--print", templates, "--profile", profile],
                          env=env, cwd=project, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def mutated_copy(mutant: Mutant, source: Path, scratch: Path) -> Path:
    """A directory under `scratch` holding the reply package at `source` with the mutant applied."""
    root = scratch / mutant.id
    shutil.copytree(source, root / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    mutated = root / source.name / mutant.file
    mutated.write_text(mutant.apply(mutated.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def print_deep(build: Callable[[], dict[str, str]]) -> None:
    """Print as JSON what `build` returns, built in a thread with a stack and recursion limit deep enough for
    every reader."""
    result: dict[str, str] = {}
    sys.setrecursionlimit(RECURSION)
    threading.stack_size(STACK)
    worker = threading.Thread(target=lambda: result.update(build()))
    worker.start()
    worker.join()
    print(json.dumps(result))


def changed(mutant: Mutant, source: Path, templates: str, profile: str, before: dict[str, str] | None = None,
            project: Path = PROJECT) -> dict[str, tuple[str, str]]:
    """The sessions whose reader the mutant of the reply package at `source` builds otherwise than the
    unmutated package does (`before`, built here when not given): (unmutated, mutated)."""
    with tempfile.TemporaryDirectory(prefix="same-grammars-") as scratch:
        after = in_child(mutated_copy(mutant, source, Path(scratch)), templates, profile, project)
    if before is None:
        before = in_child(source.parent, templates, profile, project)
    return {key: (before.get(key, ""), after.get(key, "")) for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)}


def reply_mutant(mutant_id: str) -> Mutant:
    """The mutant of the project's reply/ with this id."""
    source = PROJECT / "reply"
    for file in sorted(source.rglob("*.py")):
        for mutant in mutants_of(source, file):
            if mutant.id == mutant_id:
                return mutant
    raise SystemExit(f"same_grammars: no mutant {mutant_id} of reply/")


def main(argv: list[str] | None = None) -> int:
    """Print, per mutant, whether any session's reader is built otherwise (exit 1 when one is)."""
    parser = argparse.ArgumentParser(prog="python3 -m reports.same_grammars", description=__doc__)
    parser.add_argument("ids", nargs="*", help="mutant ids (chatparity mutate --list)")
    parser.add_argument("--templates", default="*", help="template file-name glob (default: every one)")
    parser.add_argument("--profile", choices=("quick", "full"), default="full",
                        help="whose sessions' readers are compared (default: full)")
    parser.add_argument("--print", dest="print_for", metavar="GLOB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.print_for is not None:
        print_deep(lambda: readers(args.print_for, args.profile))
        return 0
    status = 0
    source = PROJECT / "reply"
    before = in_child(PROJECT, args.templates, args.profile)
    for mutant_id in args.ids:
        differing = changed(reply_mutant(mutant_id), source, args.templates, args.profile, before)
        print(f"{mutant_id}: " + ("the same reader for every session" if not differing else
                                  f"built otherwise for {len(differing)} sessions"))
        for key in differing:
            print(f"    {key}")
        status |= bool(differing)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
