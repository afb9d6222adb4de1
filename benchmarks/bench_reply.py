"""Benchmark of the project parser (reply/) against llama.cpp at its own job, CPU against CPU on the same replies
and chunks (llama.cpp timed in C++ inside the oracle, no JSON): whole parses of each syntax's replies; long
replies streamed at each chunking, next to llama-server's loop; the per-character cost at growing sizes.

Run: python benchmarks/bench_reply.py [--sizes 1000,10000,100000] [--chunkings char,tokens,chars4]
                                     [--linear-sizes 1000,1000000] [--no-oracle] [--syntaxes a,b] [--repeat N]
                                     [--no-stream]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import reply
from chatparity.model import Session
from harness.chunkings import boundaries, token_pieces
from oracle.client import Oracle
from oracle.vocabs import vocab_named, vocab_of_family
from reply.reader import Reader
from reply.request import Request
from reply.syntaxes import registered, select
from reply.template import Template
from templates.index import load_index
from tests.reply_support import (
    JINJA2_RENDER_FAILS,
    SYNTAX_TEMPLATES,
    replies,
    sessions,
    written_turn,
)

WHOLE_TARGET = 1.0
STREAM_TARGET = 2.0
ORACLE_STREAM_CHUNKS = 20_000
CHUNKINGS = "char,tokens,chars4"


def session_of(syntax: str) -> Session:
    """The benchmark's session of a syntax: its first template, in think/auto where that renders with jinja2,
    else in the first mode that does, else in think/auto."""
    names = SYNTAX_TEMPLATES.get(syntax) or tuple(n for n in JINJA2_RENDER_FAILS if load_index()[n].syntax == syntax)
    found = sessions(names[0])
    ordered = sorted(found, key=lambda s: s.mode.label != "think/auto")
    for s in ordered:
        try:
            reply.open(s)
            return s
        except reply.RenderFailed:
            continue
    return ordered[0]


def opened(s: Session, oracle: Any) -> reply.Reader | None:
    """A reader of the session; where jinja2 cannot render the template, one reading after llama.cpp's own
    generation prompt (None without the oracle)."""
    try:
        return reply.open(s)
    except reply.RenderFailed:
        if oracle is None:
            return None
    template = Template(s.template_source, s.bos, s.eos)
    request = Request(tools=list(s.tools), tool_choice=s.tool_choice, parallel=s.parallel_tool_calls,
                      extract_reasoning=s.reasoning_format != "none", enable_thinking=s.enable_thinking,
                      generation_prompt=oracle.render(s.render_request()).generation_prompt)
    syntax = select(template)
    assert syntax is not None
    return Reader(syntax, template, request)


def corpus(only: set[str] | None = None) -> list[tuple[str, Session, list[str]]]:
    """One session per syntax of the registry with its finished replies (the generic ones and the template's
    own call turns where it writes them)."""
    names = sorted(syntax.name for syntax in registered())
    unknown = (only or set()) - set(names)
    if unknown:
        print(f"bench_reply.py: no syntax named {', '.join(sorted(unknown))} (known: {', '.join(names)})",
              file=sys.stderr)
        raise SystemExit(2)
    out = []
    for syntax in names:
        if only and syntax not in only:
            continue
        s = session_of(syntax)
        out.append((syntax, s, [text for text, partial in replies(s) if not partial]))
    return out


def timed(action, *args, repeat: int = 1, clock=time.perf_counter, before=lambda: None) -> float:
    """Seconds of the fastest of `repeat` runs of `action(*args)` (the least disturbed by other load), by
    `clock` (wall time unless told, e.g. time.process_time for CPU time), each after an untimed `before()`."""
    best = float("inf")
    for _ in range(repeat):
        before()
        start = clock()
        action(*args)
        best = min(best, clock() - start)
    return best


def parse_all(reader: reply.Reader, texts: list[str]) -> None:
    """Whole parses of every text, refusals included."""
    for text in texts:
        try:
            reader.parse(text)
        except reply.Rejected:
            pass


def reply_cpu(reader: reply.Reader, texts: list[str], repeat: int) -> float:
    """The project parser's CPU seconds for whole parses of every text, the fastest of `repeat` runs each."""
    return sum(timed(parse_all, reader, [text], repeat=repeat, clock=time.process_time, before=reader.forget)
               for text in texts)


def throughput(use_oracle: bool, only: set[str] | None = None, repeat: int = 50) -> None:
    """Whole parses of each syntax's replies in CPU time, the project parser next to llama.cpp's C++ (timed
    inside the oracle, no JSON), each reply the fastest of `repeat` runs."""
    oracle = Oracle() if use_oracle else None
    rows, below = [], []
    for syntax, s, texts in corpus(only):
        reader = opened(s, oracle)
        if reader is None:
            rows.append([syntax, s.mode.label, len(texts), "", "", "(needs the oracle's generation prompt)"])
            continue
        mine = reply_cpu(reader, texts, repeat)
        row = [syntax, s.mode.label, len(texts), sum(len(t) for t in texts), f"{mine / len(texts) * 1e6:,.1f}"]
        if oracle is not None:
            handle = oracle.render(s.render_request()).handle
            theirs = sum(oracle.time(handle, text, [], repeat).whole for text in texts)
            row += [f"{theirs / len(texts) * 1e6:,.1f}", f"{theirs / mine:.2f}"]
            if theirs / mine < WHOLE_TARGET:
                below.append(f"{syntax} {theirs / mine:.2f}x")
        rows.append(row)
    headers = ["syntax", "mode", "replies", "chars", "reply µs/reply"]
    if oracle is not None:
        headers += ["llama.cpp µs/reply", "llama.cpp / reply"]
        oracle.close()
    print(f"Whole parse, CPU time per reply (fastest of {repeat}); llama.cpp timed in C++ inside the oracle; target: "
          f"llama.cpp / reply >= {WHOLE_TARGET}")
    print(tabulate(rows, headers=headers, tablefmt="github"))
    if oracle is not None:
        print(f"below target: {', '.join(below)}" if below else "every syntax meets the target")


def parallel_session(s: Session) -> Session:
    """The session's template in a mode that lets a reply call two tools (a long turn writes two calls)."""
    found = {other.mode.label: other for other in sessions(s.template)}
    return found.get("think/parallel") or found.get("nothink/parallel") or s


def long_turn(s: Session, size: int) -> str | None:
    """What the session's template writes for an assistant turn of about `size` characters: a quarter
    thought, a quarter content, then a call with a long string argument and a call with a long array (as
    much of that as the template writes, scaled up to the size); None where it writes no call turn."""
    def turn(quarter: int) -> str | None:
        words = ("word " * (quarter // 5 + 1))[:quarter]
        calls = [("get_weather", {"city": ("Rio de Janeiro " * (quarter // 15 + 1))[:quarter]}),
                 ("create_event", {"event": {"title": "t"}, "attendees": [f"a{i:05d}" for i in range(quarter // 10)]})]
        return written_turn(s, calls, content=words, reasoning=words)

    first = turn(size // 4)
    return turn(size * size // 4 // len(first)) if first else None


def chunked(text: str, chunking: str, oracle: Oracle, s: Session) -> tuple[str, ...]:
    """The reply cut as a chunking cuts it: 'char', 'chars4' (4 characters a chunk) or 'tokens' (llama.cpp's
    own tokens in the template's vocab, as llama-server streams them)."""
    if chunking == "char":
        return tuple(text)
    if chunking == "chars4":
        return tuple(text[i:i + 4] for i in range(0, len(text), 4))
    entry = load_index()[s.template]
    vocab = vocab_named(entry.vocab) if entry.vocab else vocab_of_family(entry.family)
    found = oracle.tokenize(vocab, text)
    return token_pieces(text, found.pieces, found.special).texts


def reply_stream_cpu(reader: reply.Reader, chunks: tuple[str, ...]) -> float:
    """The project parser's CPU seconds to stream the chunks and finish, as a server feeds it."""
    reader.forget()
    stream = reader.stream()
    start = time.process_time()
    for chunk in chunks:
        try:
            stream.feed(chunk)
        except reply.Rejected:
            pass
    try:
        stream.finish()
    except reply.Rejected:
        pass
    return time.process_time() - start


def server_loop_cpu(oracle: Oracle, handle: int, chunks: tuple[str, ...]) -> tuple[float, bool]:
    """llama-server's CPU seconds for the stream (partial parse and diffs after each chunk, then the final
    parse), timed in C++; past ORACLE_STREAM_CHUNKS chunks only the first ones are timed (a lower bound, True)."""
    cut = chunks[:ORACLE_STREAM_CHUNKS]
    text = "".join(cut)
    return oracle.time(handle, text, list(boundaries(cut)), 1).stream, len(cut) < len(chunks)


def streaming(sizes: list[int], chunkings: list[str], use_oracle: bool, only: set[str] | None = None) -> None:
    """Long replies of each syntax streamed at each chunking: the project parser's CPU time next to
    llama-server's loop, and both whole parses, at growing sizes."""
    oracle = Oracle()
    rows, below = [], []
    for syntax, first, _ in corpus(only):
        s = parallel_session(first)
        try:
            reader = reply.open(s)
        except reply.RenderFailed:
            continue
        handle = oracle.render(s.render_request()).handle if use_oracle else 0
        for size in sizes:
            text = long_turn(s, size)
            if text is None:
                break
            whole = timed(parse_all, reader, [text], repeat=3, clock=time.process_time, before=reader.forget)
            row = [syntax, len(text), f"{whole * 1e3:.2f}"]
            if use_oracle:
                theirs = oracle.time(handle, text, [], 3).whole
                row.append(f"{theirs * 1e3:.2f}")
            for chunking in chunkings:
                chunks = chunked(text, chunking, oracle, s)
                mine = reply_stream_cpu(reader, chunks)
                row.append(f"{mine * 1e3:,.1f}")
                if use_oracle:
                    loop, bound = server_loop_cpu(oracle, handle, chunks)
                    row += [f"{'>=' if bound else ''}{loop * 1e3:,.1f}", f"{'>=' if bound else ''}{loop / mine:,.1f}"]
                    if loop / mine < STREAM_TARGET:
                        below.append(f"{syntax} {len(text)} {chunking} {loop / mine:.1f}x")
            rows.append(row)
    oracle.close()
    headers = ["syntax", "chars", "reply whole ms"] + (["llama.cpp whole ms"] if use_oracle else [])
    for chunking in chunkings:
        headers.append(f"reply {chunking} ms")
        if use_oracle:
            headers += [f"llama-server {chunking} ms", f"{chunking} ratio"]
    print(f"\nLong replies streamed, CPU time: the project parser's stream (feed every chunk, finish) next to "
          f"llama-server's loop (partial parse and diffs after each chunk, timed in C++; '>=' where only its first "
          f"{ORACLE_STREAM_CHUNKS:,} chunks were timed); target: ratio >= {STREAM_TARGET}")
    print(tabulate(rows, headers=headers, tablefmt="github"))
    if use_oracle:
        print(f"below target: {', '.join(below)}" if below else "every stream meets the target")


def per_character(sizes: list[int], only: set[str] | None = None) -> None:
    """The project parser's CPU µs per character of a per-character stream at growing sizes: flat when the
    stream is linear in the reply."""
    rows = []
    for syntax, first, _ in corpus(only):
        s = parallel_session(first)
        try:
            reader = reply.open(s)
        except reply.RenderFailed:
            continue
        costs = []
        for size in sizes:
            text = long_turn(s, size)
            if text is None:
                break
            costs.append(reply_stream_cpu(reader, tuple(text)) / len(text) * 1e6)
        if costs:
            rows.append([syntax, *(f"{cost:.2f}" for cost in costs), f"{max(costs) / min(costs):.2f}"])
    print("\nPer-character stream, CPU µs per character at each size (linear: the last column near 1)")
    print(tabulate(rows, headers=["syntax", *(f"{size:,} chars" for size in sizes), "max / min"], tablefmt="github"))


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="long reply sizes in characters")
    parser.add_argument("--chunkings", default=CHUNKINGS, help=f"of char, tokens, chars4 (default {CHUNKINGS})")
    parser.add_argument("--linear-sizes", default="", help="sizes for the per-character table, e.g. 1000,1000000")
    parser.add_argument("--no-oracle", action="store_true")
    parser.add_argument("--syntaxes", default="", help="comma-separated syntax names (default: every one)")
    parser.add_argument("--repeat", type=int, default=20, help="runs per reply, the fastest kept (default 20)")
    parser.add_argument("--no-stream", action="store_true", help="only the whole-parse table")
    args = parser.parse_args()
    only = set(filter(None, args.syntaxes.split(","))) or None
    throughput(not args.no_oracle, only, args.repeat)
    if not args.no_stream:
        streaming([int(s) for s in args.sizes.split(",")], args.chunkings.split(","), not args.no_oracle, only)
    if args.linear_sizes:
        per_character([int(s) for s in args.linear_sizes.split(",")], only)


if __name__ == "__main__":
    main()
