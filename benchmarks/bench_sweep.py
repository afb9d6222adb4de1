"""Benchmark a sweep: where its time goes (oracle, parser under test, harness, store, reports) and its memory.

Runs `chatparity sweep` in this process (the controller) with the sweep_timers plugin in every pytest
process, e.g.  python3 benchmarks/bench_sweep.py --profile quick -n 2 --out /tmp/me/bench [--templates GLOB]
Every flag of `chatparity sweep` is accepted; --out defaults to a scratch directory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from tabulate import tabulate

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import sweep_timers

from harness.oracle_cache import CACHE_FILE, default_directory
from harness.sweep_command import arguments


def merged(directory: Path) -> tuple[dict[str, float], dict[str, float], dict[str, int], int]:
    """The wall and CPU timings of this process and of every worker that left a file, and the worker count."""
    seconds, cpu, calls = dict(sweep_timers.SECONDS), dict(sweep_timers.CPU), dict(sweep_timers.CALLS)
    files = sorted(directory.glob("worker-*.json"))
    for file in files:
        found = json.loads(file.read_text(encoding="utf-8"))
        for into, key in ((seconds, "seconds"), (cpu, "cpu"), (calls, "calls")):
            for name, value in found[key].items():
                into[name] = into.get(name, 0) + value
    return seconds, cpu, calls, len(files)


def remainder(timings: dict[str, float]) -> dict[str, float]:
    """The phases, with the sessions' unwrapped remainder as `harness: rest of the runner`."""
    within = sum(value for name, value in timings.items() if not name.startswith(("controller", "reports", "session")))
    phases = {name: value for name, value in timings.items() if name != "session items (total)"}
    phases["harness: rest of the runner"] = max(0.0, timings.get("session items (total)", 0.0) - within)
    return phases


def breakdown(seconds: dict[str, float], cpu: dict[str, float], calls: dict[str, int]) -> list[list[object]]:
    """One line per phase: wall seconds, CPU seconds, calls and share of the session items' CPU time."""
    walls, cpus = remainder(seconds), remainder(cpu)
    total, total_cpu = seconds.get("session items (total)", 0.0), cpu.get("session items (total)", 0.0)
    lines = [[name, f"{value:.2f}", f"{cpus.get(name, 0.0):.2f}", calls.get(name, ""),
              f"{100 * cpus.get(name, 0.0) / total_cpu:.1f}%" if total_cpu else ""]
             for name, value in sorted(walls.items())]
    lines.append(["session items (total, all workers)", f"{total:.2f}", f"{total_cpu:.2f}",
                  calls.get("session items (total)", ""), ""])
    return lines


WALL_TARGETS = {("quick", "warm"): 20.0, ("full", "warm"): 360.0, ("full", "cold"): 600.0}
MEMORY_TARGET_MIB = 1024.0


def narrowed(options: argparse.Namespace) -> bool:
    """Whether the sweep runs less than its whole profile (some templates, modes, chunkings, cases or replies)."""
    return bool(options.templates or options.family or options.mode or options.chunking or options.corpus
                or options.case or options.only_failing or options.source != "catalog")


def cache_was_empty(options: argparse.Namespace) -> bool | None:
    """Whether the run's oracle cache held no answer before it started (None: the run uses no cache)."""
    if options.no_oracle_cache:
        return None
    file = (options.oracle_cache or default_directory()) / CACHE_FILE
    if not file.exists():
        return True
    with closing(sqlite3.connect(f"file:{file}?mode=ro", uri=True)) as connection:
        try:
            return connection.execute("SELECT 1 FROM answers LIMIT 1").fetchone() is None
        except sqlite3.OperationalError:
            return True


def cache_state(empty: bool | None, misses: int) -> str:
    """How warm the oracle cache was: cold (empty at the start), warm (every read found), partly warm, or
    unused."""
    if empty is None:
        return "unused"
    if empty:
        return "cold"
    return "warm" if not misses else "partly warm"


def target_lines(options: argparse.Namespace, wall: float, state: str, peak: float) -> list[str]:
    """The run against the speed and memory targets of its profile and oracle cache state (none for a narrowed
    run or one without a target)."""
    if narrowed(options):
        return ["targets: none for a narrowed run"]
    profile = options.profile
    lines = []
    target = WALL_TARGETS.get((profile, state))
    if target is not None:
        verdict = "met" if wall <= target else "not met"
        lines.append(f"target: {profile} profile, {state} oracle cache, at most {target:.0f} s: {wall:.1f} s, {verdict}")
    if profile == "full":
        verdict = "met" if peak < MEMORY_TARGET_MIB else "not met"
        lines.append(f"target: controller peak under {MEMORY_TARGET_MIB:.0f} MiB: {peak:.0f} MiB, {verdict}")
    return lines or [f"targets: none for the {profile} profile with a {state} oracle cache"]


def peak_mib(who: int) -> float:
    """Peak resident memory in MiB (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024


def main(argv: list[str]) -> int:
    """Run the sweep with timers and print the breakdown, the rows and the peak memory."""
    from reports.commands import sweep as sweep_command

    scratch = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    if "--out" not in argv:
        argv = [*argv, "--out", str(scratch / "run")]
    os.environ[sweep_timers.DIRECTORY] = str(scratch)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])
    argv = [*argv, "--pytest-args", "-p sweep_timers -q"] if "--pytest-args" not in argv else argv
    before_reports: list[float] = []
    load_reports = sweep_command.load_reports

    def load_measured_reports() -> None:
        """Load the report modules as the sweep command does, its publishing timed and noting the controller's
        peak memory before the reports load the store."""
        load_reports()
        from reports import publish as reports_publish

        publish = sweep_timers.timed("reports: publish", reports_publish.publish)

        def measured_publish(run: Path, beside: Callable[..., object] | None = None) -> object:
            """Publish (and judge the run beside the writing) after noting the peak memory."""
            before_reports.append(peak_mib(resource.RUSAGE_SELF))
            return publish(run, beside=beside)

        reports_publish.publish = measured_publish

    sweep_command.load_reports = load_measured_reports
    options = arguments("bench_sweep").parse_args(argv)
    empty = cache_was_empty(options)
    started = time.perf_counter()
    status = sweep_command.main(argv, "bench_sweep")
    wall = time.perf_counter() - started
    seconds, cpu, calls, workers = merged(scratch)
    rows = calls.get("harness: reading json", 0)
    print(f"\nsweep {' '.join(argv)}: exit {status}, wall {wall:.1f} s, {workers} worker(s)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")
    print(tabulate(breakdown(seconds, cpu, calls), headers=["phase", "wall s", "cpu s", "calls", "of items cpu"],
                   disable_numparse=True))
    hits, misses = calls.get("oracle cache hits", 0), calls.get("oracle cache misses", 0)
    print(f"oracle cache: {hits} hits, {misses} misses; reading_json calls {rows}")
    sweeping = f"{before_reports[0]:.0f} MiB while sweeping, " if before_reports else ""
    peak = peak_mib(resource.RUSAGE_SELF)
    print(f"peak RSS: controller {sweeping}{peak:.0f} MiB with the reports; "
          f"largest worker or child {peak_mib(resource.RUSAGE_CHILDREN):.0f} MiB")
    print("\n".join(target_lines(options, wall, cache_state(empty, misses), peak)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
