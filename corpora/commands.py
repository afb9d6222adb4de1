"""`chatparity corpus`: show the sessions and replies a sweep would run, with truth, or their counts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tabulate import tabulate

from chatparity.model import Profile
from corpora.catalog import CorpusCounts, count, plan, session_corpus
from corpora.corpus_file import CorpusFileError
from corpora.planning import PlannedSession


def parser(prog: str) -> argparse.ArgumentParser:
    """The command's arguments."""
    p = argparse.ArgumentParser(prog=prog, description="Show the sessions and replies a sweep would run.")
    p.add_argument("--templates", "--template", dest="template", metavar="GLOB",
                   help="a glob on the template file name")
    p.add_argument("--family", help="a template family, e.g. Qwen3")
    p.add_argument("--mode", help="a glob on the mode label, e.g. 'think/*'")
    p.add_argument("--profile", default=Profile.QUICK.value, choices=[p.value for p in Profile])
    p.add_argument("--corpus", "--corpus-file", dest="corpus_file", metavar="FILE", type=Path,
                   help="a JSON-lines corpus file")
    p.add_argument("--counts", action="store_true", help="print totals only")
    return p


def counts_table(counts: CorpusCounts) -> str:
    """The totals: templates, sessions, replies by origin, skipped shapes by origin."""
    rows = [["templates", counts.templates], ["sessions", counts.sessions]]
    rows += [[f"replies: {origin}", n] for origin, n in counts.replies.items()]
    rows += [["replies: total", counts.total]]
    rows += [[f"skipped shapes: {origin}", n] for origin, n in counts.skips.items()]
    return tabulate(rows, tablefmt="plain")


def show(planned: PlannedSession, profile: str) -> str:
    """One session, its replies with truth, and the shapes it left out."""
    session = planned.session
    lines = [f"== {session.template}  {session.mode.label}  {session.conversation}  session {session.id}"
             + (f"  jinja2 error: {planned.jinja_error}" if planned.jinja_error else "")]
    corpus = session_corpus(planned, profile)
    for reply in corpus.replies:
        truth = json.dumps(reply.truth.to_json(), ensure_ascii=False) if reply.truth else "-"
        flag = " partial" if reply.partial else ""
        lines.append(f"  [{reply.origin}] {reply.shape}{flag}: {json.dumps(reply.text, ensure_ascii=False)}")
        lines.append(f"      truth: {truth}" + (f"  note: {reply.note}" if reply.note else ""))
    lines += [f"  skipped [{skip.origin}] {skip.shape}: {skip.reason}" for skip in corpus.skips]
    return "\n".join(lines)


def main(argv: list[str], prog: str = "chatparity corpus") -> int:
    """Print the sessions and replies (or their counts) of a profile."""
    args = parser(prog).parse_args(argv)
    try:
        planned = plan(args.profile, args.template, args.family, args.mode, args.corpus_file)
    except CorpusFileError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    if not planned:
        print(f"{prog}: no session matches", file=sys.stderr)
        return 1
    if args.counts:
        print(counts_table(count(planned, args.profile)))
        return 0
    for session in planned:
        print(show(session, args.profile))
    return 0
