"""Benchmark of the project parser (reply/): whole-parse throughput next to the oracle's (llama.cpp) on the
same replies, and the cost of a per-character stream of a long reply against its whole parse at growing
sizes (linear growth: constant time and scanner work per character).

Run: python benchmarks/bench_reply.py [--sizes 12500,25000,50000,100000] [--no-oracle] [--syntaxes a,b]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import reply
from reply.syntaxes import registered
from tests.reply_support import SYNTAX_TEMPLATES, replies, session, sessions


def corpus(only: set[str] | None = None) -> list[tuple[str, object, list[str]]]:
    """One session per syntax of the registry (think/auto where the template has it) with its finished
    replies; syntaxes whose templates jinja2 cannot render with tools are named and left out."""
    missing = {syntax.name for syntax in registered()} - set(SYNTAX_TEMPLATES)
    if missing:
        print(f"left out (no template jinja2 renders with tools): {', '.join(sorted(missing))}")
    out = []
    for syntax, names in SYNTAX_TEMPLATES.items():
        if only and syntax not in only:
            continue
        modes = [s.mode.label for s in sessions(names[0])]
        s = session(names[0], "think/auto" if "think/auto" in modes else modes[0])
        out.append((syntax, s, [text for text, partial in replies(s) if not partial]))
    return out


def timed(action, *args, repeat: int = 1) -> float:
    """Seconds of the fastest of `repeat` runs of `action(*args)` (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action(*args)
        best = min(best, time.perf_counter() - start)
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


def throughput(use_oracle: bool, only: set[str] | None = None) -> None:
    """Replies per second and characters per second, project parser next to the oracle."""
    oracle = None
    if use_oracle:
        from oracle.client import Oracle

        oracle = Oracle()
    rows = []
    for syntax, s, texts in corpus(only):
        reader = reply.open(s)
        size = sum(len(t) for t in texts)
        mine = timed(parse_all, reader, texts, repeat=5)
        row = [syntax, len(texts), size, f"{len(texts) / mine:,.0f}", f"{size / mine / 1e3:,.0f}"]
        if oracle is not None:
            handle = oracle.render(s.render_request()).handle
            theirs = timed(oracle_parse_all, oracle, handle, texts, repeat=5)
            row += [f"{len(texts) / theirs:,.0f}", f"{size / theirs / 1e3:,.0f}", f"{theirs / mine:.2f}"]
        rows.append(row)
    headers = ["syntax", "replies", "chars", "reply/s", "kchar/s"]
    if oracle is not None:
        headers += ["oracle reply/s", "oracle kchar/s", "oracle time / reply time"]
        oracle.close()
    print("Whole-parse throughput, best of 5 runs (oracle figures include its JSON-lines round trip per reply)")
    print(tabulate(rows, headers=headers, tablefmt="github"))


def long_reply(size: int) -> str:
    """A Qwen3 (hermes) reply of about `size` characters: a quarter thought, a quarter content, then a call
    with a long string argument and a call with a long array."""
    quarter = size // 4
    words = ("word " * (quarter // 5 + 1))[:quarter]
    args = json.dumps({"city": "x" * quarter, "days": 4})
    event = json.dumps({"event": {"title": "t"}, "attendees": [f"a{i:05d}" for i in range(quarter // 10)]})
    return (f"<think>{words}</think>{words}<tool_call>\n"
            f'{{"name": "get_weather", "arguments": {args}}}\n</tool_call>\n<tool_call>\n'
            f'{{"name": "create_event", "arguments": {event}}}\n</tool_call>')


def streaming(sizes: list[int]) -> None:
    """Per-character stream against whole parse, at growing reply sizes."""
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", "think/parallel"))
    rows = []
    for size in sizes:
        text = long_reply(size)
        whole = timed(reader.parse, text, repeat=3)
        stream = reader.stream()
        start = time.perf_counter()
        for char in text:
            stream.feed(char)
        final = stream.finish()
        elapsed = time.perf_counter() - start
        assert final == reader.parse(text), "stream end differs from the whole parse"
        rows.append([len(text), f"{whole * 1e3:.1f}", f"{elapsed:.2f}", f"{elapsed / len(text) * 1e6:.1f}",
                     f"{(elapsed - whole) / len(text) * 1e6:.1f}", stream.examined,
                     f"{stream.examined / len(text):.2f}", f"{elapsed / whole:,.0f}"])
    print("\nPer-character stream of a long reply vs its whole parse (linear: µs/char and work/char stay flat)")
    print(tabulate(rows, headers=["chars", "whole parse ms", "char stream s", "stream µs/char",
                                  "per-chunk overhead µs", "chars examined", "examined/char", "stream / whole"], tablefmt="github"))


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="12500,25000,50000,100000")
    parser.add_argument("--no-oracle", action="store_true")
    parser.add_argument("--syntaxes", default="", help="comma-separated syntax names (default: every one)")
    args = parser.parse_args()
    throughput(not args.no_oracle, set(filter(None, args.syntaxes.split(","))) or None)
    streaming([int(s) for s in args.sizes.split(",")])


if __name__ == "__main__":
    main()
