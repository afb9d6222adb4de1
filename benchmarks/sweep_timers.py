"""A pytest plugin for bench_sweep: accumulating timers wrapped around a sweep's phases, in every process.

Loaded only by the benchmark (`-p sweep_timers`); a sweep without it runs unwrapped code.
Each timer keeps its own time, less the time of timers nested inside it: wall-clock seconds (`SECONDS`) and this
process's CPU seconds (`CPU`, which a loaded machine inflates far less; a child process's work is not in it).
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DIRECTORY = "CHATPARITY_BENCH_DIR"
SECONDS: dict[str, float] = {}
CPU: dict[str, float] = {}
CALLS: dict[str, int] = {}
STACK: list[tuple[float, float]] = []


def timed(phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` with its own time (nested timed calls excluded) added to `phase`."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        STACK.append((0.0, 0.0))
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
            nested, nested_cpu = STACK.pop()
            SECONDS[phase] = SECONDS.get(phase, 0.0) + elapsed - nested
            CPU[phase] = CPU.get(phase, 0.0) + elapsed_cpu - nested_cpu
            CALLS[phase] = CALLS.get(phase, 0) + 1
            if STACK:
                outer, outer_cpu = STACK[-1]
                STACK[-1] = (outer + elapsed, outer_cpu + elapsed_cpu)

    return wrapper


def wrap(owner: Any, name: str, phase: str) -> None:
    """Replace `owner.name` with its timed version."""
    setattr(owner, name, timed(phase, getattr(owner, name)))


class TimedReader:
    """A session reader whose whole parses and streams are timed."""

    def __init__(self, reader: Any) -> None:
        self.parse = timed("parser: whole", reader.parse)
        self.stream = timed("parser: streams", reader.stream)


class TimedParser:
    """A parser under test whose sessions open timed readers."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser

    def open(self, session: Any) -> TimedReader:
        """The parser's reader of `session`, timed."""
        return TimedReader(timed("parser: open", self.parser.open)(session))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)


def counted_get(function: Callable[..., Any]) -> Callable[..., Any]:
    """The cache's get, counting hits and misses."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        found = function(*args, **kwargs)
        key = "oracle cache hits" if found is not None else "oracle cache misses"
        CALLS[key] = CALLS.get(key, 0) + 1
        return found

    return wrapper


def timed_by_op(function: Callable[..., Any]) -> Callable[..., Any]:
    """The oracle's `ask`, timed in one phase per request op (render, parse, stream, tokenize)."""
    by_op: dict[str, Callable[..., Any]] = {}

    @functools.wraps(function)
    def wrapper(self: Any, op: str, *args: Any, **kwargs: Any) -> Any:
        if op not in by_op:
            by_op[op] = timed(f"oracle: llama.cpp {op}", function)
        return by_op[op](self, op, *args, **kwargs)

    return wrapper


def install() -> None:
    """Wrap the sweep's phases."""
    from harness import oracle_cache, oracle_reads, runner, sweep_plugin

    wrap(oracle_cache.OracleCache, "get", "oracle: cache reads")
    oracle_cache.OracleCache.get = counted_get(oracle_cache.OracleCache.get)  # type: ignore[method-assign]
    wrap(oracle_cache.OracleCache, "put", "oracle: cache writes")
    oracle_reads.OracleReads.ask = timed_by_op(oracle_reads.OracleReads.ask)  # type: ignore[method-assign]
    for name in ("render", "parse", "partials"):
        wrap(oracle_reads.OracleSession, name, "oracle: reads (harness side)")
    for name in ("loaded", "__call__", "save"):
        wrap(oracle_reads.PrefixReads, name, "oracle: reads (harness side)")
    for name in ("states_before", "server_stream", "server_final"):
        wrap(runner, name, "harness: server view")
    for name in ("compare", "verdict"):
        wrap(runner, name, "harness: comparison")
    wrap(runner, "check_stream", "harness: stream checks")
    wrap(runner, "reading_json", "harness: reading json")
    wrap(sweep_plugin, "payload_bytes", "harness: payload marshal")
    wrap(sweep_plugin, "payload_of", "controller: payload decode")
    wrap(sweep_plugin.SweepState, "keep", "controller: store spool")
    wrap(sweep_plugin, "write_store", "controller: store write")
    original = runner.SessionRunner.__init__

    def init(self: Any, planned: Any, replies: Any, parser: Any, *rest: Any, **kwargs: Any) -> None:
        original(self, planned, replies, TimedParser(parser), *rest, **kwargs)

    runner.SessionRunner.__init__ = init  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    """Wrap the phases in this process."""
    install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Time the whole item (the session), so the unwrapped rest is known."""
    started, started_cpu = time.perf_counter(), time.process_time()
    try:
        return (yield)
    finally:
        SECONDS["session items (total)"] = SECONDS.get("session items (total)", 0.0) + time.perf_counter() - started
        CPU["session items (total)"] = CPU.get("session items (total)", 0.0) + time.process_time() - started_cpu
        CALLS["session items (total)"] = CALLS.get("session items (total)", 0) + 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker leaves its timings in the benchmark's directory."""
    if hasattr(session.config, "workerinput") and os.environ.get(DIRECTORY):
        file = Path(os.environ[DIRECTORY]) / f"worker-{os.getpid()}.json"
        file.write_text(json.dumps({"seconds": SECONDS, "cpu": CPU, "calls": CALLS}), encoding="utf-8")
