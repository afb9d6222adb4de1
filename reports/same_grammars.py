"""Whether a mutant of reply/ changes what a pinned template's reader is built from: the syntax chosen, the
grammar (every parser node, literal and predicate), the markers and the reasoning tags, per template and mode.
A change in template analysis that alters none of them on any template cannot be told apart by a reply: an
equivalent on the pinned templates (reports/mutation_equivalents.toml).

Run: python3 -m reports.same_grammars ID [ID ...] [--templates GLOB]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import types
from pathlib import Path
from typing import Any

from corpora.catalog import plan
from reports.mutate import all_mutants, copy_environment

PROJECT = Path(__file__).resolve().parent.parent
STACK = 1 << 29


def fingerprint(root: Any) -> str:
    """A hash of a parser graph (`described`)."""
    return hashlib.sha256(described(root).encode()).hexdigest()[:16]


def described(root: Any) -> str:
    """A parser graph as text: each node's type and fields, literals, and predicates' bytecode and cells."""
    seen: dict[int, int] = {}

    def walk(node: Any) -> str:
        if isinstance(node, (str, int, float, bool, type(None))):
            return repr(node)
        if isinstance(node, (list, tuple)):
            return "[" + ",".join(walk(item) for item in node) + "]"
        if isinstance(node, (set, frozenset)):
            return "{" + ",".join(sorted(walk(item) for item in node)) + "}"
        if isinstance(node, dict):
            return "{" + ",".join(f"{walk(key)}:{walk(value)}" for key, value in node.items()) + "}"
        if isinstance(node, types.FunctionType):
            code, cells = node.__code__, node.__closure__ or ()
            return f"fn({code.co_code.hex()},{code.co_consts!r},{[walk(c.cell_contents) for c in cells]})"
        if id(node) in seen:
            return f"#{seen[id(node)]}"
        seen[id(node)] = len(seen)
        if dataclasses.is_dataclass(node):
            names = [f.name for f in dataclasses.fields(node) if f.name != "id"]
        elif hasattr(node, "__dict__"):
            names = sorted(vars(node))
        else:
            return repr(node)
        fields = ";".join(f"{name}={walk(getattr(node, name))}" for name in names)
        return f"@{seen[id(node)]}{type(node).__name__}({fields})"

    return walk(root)


def readers(templates: str) -> dict[str, str]:
    """Per template and mode of the quick profile's single conversations: what its reader is built from."""
    from reply.reader import open_reader

    found = {}
    for planned in plan("quick", templates=templates):
        session = planned.session
        if session.conversation != "single":
            continue
        try:
            reader = open_reader(session)
            built = (f"{reader.syntax.name} {reader.template.route} {reader.template.reasoning!r} "
                     f"{fingerprint(reader.arena.root)} {reader.markers} {reader.call_starts} {reader.prefix!r}")
        except Exception as error:  # noqa: BLE001 - a refusal or a crash is what was built
            built = f"{type(error).__name__}: {error}"
        found[f"{session.template} {session.mode.label}"] = built
    return found


def in_child(source: Path, templates: str) -> dict[str, str]:
    """`readers` of the reply package at `source` (a directory holding reply/), in a process of its own."""
    env = copy_environment(source, PROJECT)
    done = subprocess.run([sys.executable, "-m", "reports.same_grammars", "--print", templates], env=env,
                          cwd=PROJECT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def changed(mutant_id: str, templates: str, before: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """The templates and modes whose reader the mutant builds otherwise than the unmutated parser does
    (`before`, built here when not given): (unmutated, mutated)."""
    mutant = next((m for m in all_mutants(PROJECT / "reply", "*.py") if m.id == mutant_id), None)
    if mutant is None:
        raise SystemExit(f"same_grammars: no mutant {mutant_id} of reply/")
    with tempfile.TemporaryDirectory(prefix="same-grammars-") as scratch:
        copy = Path(scratch)
        shutil.copytree(PROJECT / "reply", copy / "reply", ignore=shutil.ignore_patterns("__pycache__"))
        mutated = copy / "reply" / mutant.file
        mutated.write_text(mutant.apply(mutated.read_text(encoding="utf-8")), encoding="utf-8")
        after = in_child(copy, templates)
    if before is None:
        before = in_child(PROJECT, templates)
    return {key: (before.get(key, ""), after.get(key, "")) for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)}


def main(argv: list[str] | None = None) -> int:
    """Print, per mutant, whether any template's reader is built otherwise (exit 1 when one is)."""
    parser = argparse.ArgumentParser(prog="python3 -m reports.same_grammars", description=__doc__)
    parser.add_argument("ids", nargs="*", help="mutant ids (chatparity mutate --list)")
    parser.add_argument("--templates", default="*", help="template file-name glob (default: every one)")
    parser.add_argument("--print", dest="print_for", metavar="GLOB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.print_for is not None:
        result: dict[str, str] = {}
        sys.setrecursionlimit(200_000)
        threading.stack_size(STACK)
        worker = threading.Thread(target=lambda: result.update(readers(args.print_for)))
        worker.start()
        worker.join()
        print(json.dumps(result))
        return 0
    status = 0
    before = in_child(PROJECT, args.templates)
    for mutant_id in args.ids:
        differing = changed(mutant_id, args.templates, before)
        print(f"{mutant_id}: " + ("the same reader for every template and mode" if not differing else
                                  f"built otherwise for {len(differing)} template modes"))
        for key in differing:
            print(f"    {key}")
        status |= bool(differing)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
