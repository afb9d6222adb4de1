"""Whether a mutant of reply/ changes any reading of a profile's replies: the whole read and every snapshot and
finish of a stream at 1, 2, 3 and 5 characters a chunk, problems and refusals included, for every session the
profile plans. A mutant that changes none of them (a cache size, a memo reset, a proof that only saves work)
cannot be told apart by those replies; what it saves or costs is speed. The gate judges readings against
llama.cpp's, so this is the evidence that a surviving mutant is equivalent on the corpus rather than missed.

Run: python3 -m reports.same_readings ID [ID ...] [--templates GLOB] [--profile quick|full]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from corpora.catalog import plan, replies
from harness.mutants import Mutant, copy_environment
from reports.same_grammars import PROJECT, mutated_copy, print_deep, reply_mutant

CHUNK_SIZES = (1, 2, 3, 5)


def outcome(action: Any) -> str:
    """What a reader's call returns, or the refusal or crash it raises, as text."""
    try:
        return repr(action())
    except Exception as error:  # noqa: BLE001 - a refusal or a crash is a reading too
        return f"{type(error).__name__}: {error}"


def streamed(reader: Any, text: str, size: int, finish: bool) -> list[str]:
    """Every snapshot of a stream fed `size` characters a chunk, then its finish when the reply is finished."""
    stream = reader.stream()
    shown = [outcome(lambda start=start: stream.feed(text[start:start + size])) for start in range(0, len(text), size)]
    if finish:
        shown.append(outcome(stream.finish))
    return shown


def readings(templates: str, profile: str = "quick") -> dict[str, str]:
    """Per session the profile plans: a hash of every reading of its replies, whole and streamed."""
    from reply.reader import open_reader

    found = {}
    for planned in plan(profile, templates=templates):
        session = planned.session
        digest = hashlib.sha256()
        try:
            reader = open_reader(session)
        except Exception as error:  # noqa: BLE001 - a refusal or a crash is what was built
            digest.update(f"{type(error).__name__}: {error}".encode())
        else:
            for reply in replies(planned, profile):
                digest.update(outcome(partial(reader.parse, reply.text, reply.partial)).encode())
                for size in CHUNK_SIZES:
                    digest.update("\0".join(streamed(reader, reply.text, size, not reply.partial)).encode())
        found[f"{session.template} {session.mode.label} {session.conversation}"] = digest.hexdigest()[:16]
    return found


def in_child(root: Path, templates: str, profile: str) -> dict[str, str]:
    """`readings` of the reply package under `root` (a directory holding reply/), in a process of its own started
    from the project."""
    done = subprocess.run([sys.executable, "-m", "reports.same_readings", "--print", templates, "--profile", profile],
                          env=copy_environment(root, PROJECT), cwd=PROJECT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def differing(mutants: list[Mutant], templates: str, profile: str, jobs: int = 2,
              source: Path = PROJECT / "reply") -> dict[str, list[str]]:
    """Per mutant id, the sessions where the mutant of the reply package at `source` reads some reply otherwise
    than the unmutated package (`jobs` reading processes at once)."""
    with tempfile.TemporaryDirectory(prefix="same-readings-") as scratch:
        roots = [source.parent, *(mutated_copy(mutant, source, Path(scratch)) for mutant in mutants)]
        with ThreadPoolExecutor(jobs) as pool:
            unmutated, *mutated = pool.map(lambda root: in_child(root, templates, profile), roots)
    return {mutant.id: [key for key in sorted(set(unmutated) | set(found)) if unmutated.get(key) != found.get(key)]
            for mutant, found in zip(mutants, mutated)}


def main(argv: list[str] | None = None) -> int:
    """Print, per mutant, whether any session's replies read otherwise (exit 1 when one does)."""
    parser = argparse.ArgumentParser(prog="python3 -m reports.same_readings", description=__doc__)
    parser.add_argument("ids", nargs="*", help="mutant ids (chatparity mutate --list)")
    parser.add_argument("--templates", default="*", help="template file-name glob (default: every one)")
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help="whose sessions' replies are read (default: quick)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="reading processes at once (default: 2)")
    parser.add_argument("--print", dest="print_for", metavar="GLOB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.print_for is not None:
        print_deep(lambda: readings(args.print_for, args.profile))
        return 0
    status = 0
    mutants = [reply_mutant(mutant_id) for mutant_id in args.ids]
    for mutant_id, sessions in differing(mutants, args.templates, args.profile, args.jobs).items():
        print(f"{mutant_id}: " + ("every reply reads alike, whole and streamed" if not sessions else
                                  f"read otherwise in {len(sessions)} sessions"))
        for key in sessions:
            print(f"    {key}")
        status |= bool(sessions)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
