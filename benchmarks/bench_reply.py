"""Benchmark of the project parser (reply/): whole-parse throughput next to the oracle's (llama.cpp) on the
same replies, and the cost of a per-character stream of a long reply against its whole parse at growing
sizes (linear growth: constant time and scanner work per character).

Run: python benchmarks/bench_reply.py [--sizes 1000,10000,50000,100000] [--no-oracle] [--syntaxes a,b]
                                     [--repeat N] [--no-stream]
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
from reply.reader import Reader
from reply.request import Request
from reply.syntaxes import registered, select
from reply.template import Template
from templates.index import load_index
from tests.reply_support import (
    JINJA2_RENDER_FAILS,
    SYNTAX_TEMPLATES,
    replies,
    session,
    sessions,
    written_turn,
)

TARGET = 0.5
STREAM_TARGET = 10
CHUNK_TARGET = 20


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


def oracle_parse_all(oracle, handle: int, texts: list[str]) -> None:
    """Whole parses of every text by llama.cpp."""
    for text in texts:
        oracle.parse(handle, text)


def throughput(use_oracle: bool, only: set[str] | None = None, repeat: int = 50) -> None:
    """Replies per second and characters per second, project parser next to the oracle, each the best of
    `repeat` runs taken in turns (so both see the same load)."""
    oracle = None
    if use_oracle:
        from oracle.client import Oracle

        oracle = Oracle()
    rows = []
    below: list[str] = []
    for syntax, s, texts in corpus(only):
        reader = opened(s, oracle)
        if reader is None:
            rows.append([syntax, s.mode.label, len(texts), "", "", "(needs the oracle's generation prompt)"])
            continue
        size = sum(len(t) for t in texts)
        handle = oracle.render(s.render_request()).handle if oracle is not None else None
        mine = theirs = float("inf")
        for _ in range(repeat):
            mine = min(mine, timed(parse_all, reader, texts, before=reader.forget))
            if oracle is not None:
                theirs = min(theirs, timed(oracle_parse_all, oracle, handle, texts))
        row = [syntax, s.mode.label, len(texts), size, f"{len(texts) / mine:,.0f}", f"{size / mine / 1e3:,.0f}"]
        if oracle is not None:
            row += [f"{len(texts) / theirs:,.0f}", f"{size / theirs / 1e3:,.0f}", f"{theirs / mine:.2f}"]
            if theirs / mine < TARGET:
                below.append(f"{syntax} {theirs / mine:.2f}x")
        rows.append(row)
    headers = ["syntax", "mode", "replies", "chars", "reply/s", "kchar/s"]
    if oracle is not None:
        headers += ["oracle reply/s", "oracle kchar/s", "oracle time / reply time"]
        oracle.close()
    print(f"Whole-parse throughput, best of {repeat} runs taken in turns (oracle figures include its JSON-lines "
          "round trip per reply)")
    print(tabulate(rows, headers=headers, tablefmt="github"))
    if oracle is not None:
        print(f"below {TARGET}x the oracle: {', '.join(below)}" if below else f"every syntax at least {TARGET}x the oracle")


STREAM_TEMPLATES = {"hermes": "Qwen-Qwen3-0.6B.jinja", "qwen3_coder": "Qwen3-Coder.jinja",
                    "deepseek_v3_2": "deepseek-ai-DeepSeek-V3.2.jinja", "gpt_oss": "openai-gpt-oss-120b.jinja",
                    "glm": "GLM-4.6.jinja"}
STREAM_MODE = "think/parallel"
WARM_UP = 2000


def long_turn(s: Session, size: int) -> str:
    """What the session's template writes for an assistant turn of about `size` characters: a quarter
    thought, a quarter content, then a call with a long string argument and a call with a long array (as
    much of that as the template writes, scaled up to the size)."""
    def turn(quarter: int) -> str:
        words = ("word " * (quarter // 5 + 1))[:quarter]
        calls = [("get_weather", {"city": ("Rio de Janeiro " * (quarter // 15 + 1))[:quarter]}),
                 ("create_event", {"event": {"title": "t"}, "attendees": [f"a{i:05d}" for i in range(quarter // 10)]})]
        written = written_turn(s, calls, content=words, reasoning=words)
        assert written, f"{s.template} writes no call turn"
        return written

    first = turn(size // 4)
    return turn(size * size // 4 // len(first))


def fed_by_char(reader: reply.Reader, text: str) -> tuple[float, float, int]:
    """Seconds (wall, then CPU) to stream `text` one character per feed and finish, and the characters the
    scanners examined."""
    stream = reader.stream()
    start, cpu = time.perf_counter(), time.process_time()
    for char in text:
        stream.feed(char)
    final = stream.finish()
    elapsed, spent = time.perf_counter() - start, time.process_time() - cpu
    assert final == reader.parse(text), "stream end differs from the whole parse"
    return elapsed, spent, stream.examined


def snapshot_floor(text: str) -> float:
    """CPU seconds to make the snapshots a per-character stream of `text` returns with no reading at all:
    after each character a new message holding the text so far, the one before kept (as a caller keeps
    each snapshot), so each copies what was shown; the least any stream returning whole snapshots does,
    quadratic in the reply's length where a whole parse is linear."""
    start = time.process_time()
    last = reply.Message()
    for char in text:
        last = reply.Message(content=last.content + char)
    return time.process_time() - start


class IdleStream:
    """A stream that reads nothing: what feeding a reply costs before any parser does anything."""

    def feed(self, chunk: str) -> None:
        """Take the chunk and do nothing."""


def call_floor(text: str) -> float:
    """CPU seconds of feeding `text` one character per call to a stream that does nothing (`IdleStream`):
    the least any per-character stream called from Python costs, linear like a whole parse."""
    stream = IdleStream()
    start = time.process_time()
    for char in text:
        stream.feed(char)
    return time.process_time() - start


def streaming(sizes: list[int], only: set[str] | None = None) -> None:
    """Per-character stream against whole parse, per syntax at growing reply sizes: the per-character stream
    within STREAM_TARGET times the whole parse, and its per-chunk overhead within CHUNK_TARGET µs (the
    ratio in CPU time, which other load on the machine disturbs less than wall time)."""
    rows = []
    for syntax, template in STREAM_TEMPLATES.items():
        if only and syntax not in only:
            continue
        s = session(template, STREAM_MODE)
        reader = reply.open(s)
        for size in sizes:
            text = long_turn(s, size)
            fed_by_char(reader, text[:WARM_UP])
            whole = timed(reader.parse, text, repeat=5, before=reader.forget)
            whole_cpu = timed(reader.parse, text, repeat=5, clock=time.process_time, before=reader.forget)
            reader.forget()
            elapsed, spent, examined = fed_by_char(reader, text)
            floor = min(snapshot_floor(text) for _ in range(3))
            calls = min(call_floor(text) for _ in range(3))
            rows.append([syntax, len(text), f"{whole * 1e3:.2f}", f"{elapsed * 1e3:,.0f}",
                         f"{elapsed / len(text) * 1e6:.2f}", f"{(elapsed - whole) / len(text) * 1e6:.2f}",
                         f"{spent / len(text) * 1e6:.2f}", f"{examined / len(text):.2f}", f"{spent / whole_cpu:,.0f}",
                         f"{floor / len(text) * 1e6:.2f}", f"{floor / whole_cpu:,.0f}", f"{calls / whole_cpu:,.1f}"])
    print(f"\nPer-character stream of a long reply ({STREAM_MODE}) vs its whole parse; targets: stream / whole "
          f"<= {STREAM_TARGET}, per-chunk overhead <= {CHUNK_TARGET} µs (wall). The snapshot floor is the CPU "
          "time of making the snapshots alone, with no reading (`snapshot_floor`)")
    print(tabulate(rows, headers=["syntax", "chars", "whole parse ms", "char stream ms", "stream µs/char",
                                  "per-chunk overhead µs", "CPU µs/char", "examined/char", "stream / whole (CPU)",
                                  "snapshot floor µs/char", "floor / whole (CPU)", "call floor / whole (CPU)"],
                   tablefmt="github"))


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000,100000")
    parser.add_argument("--no-oracle", action="store_true")
    parser.add_argument("--syntaxes", default="", help="comma-separated syntax names (default: every one)")
    parser.add_argument("--repeat", type=int, default=50, help="runs per syntax, the best kept (default 50)")
    parser.add_argument("--no-stream", action="store_true", help="only the throughput table")
    args = parser.parse_args()
    only = set(filter(None, args.syntaxes.split(","))) or None
    throughput(not args.no_oracle, only, args.repeat)
    if not args.no_stream:
        streaming([int(s) for s in args.sizes.split(",")], only)


if __name__ == "__main__":
    main()
