"""Benchmark the llama.cpp oracle: render time per upstream template, parse and stream throughput."""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable

from tabulate import tabulate

from oracle.client import Oracle
from templates.upstream import ensure_source

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]},
    },
}
PROSE = "The forecast for Rio de Janeiro is sunny with a light breeze, 28 °C by noon. "
QWEN3_CALL = ('<think>\nThe user wants the weather in Rio.\n</think>\n\n<tool_call>\n'
              '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}\n</tool_call>')
REPEATS = 3


def best_of(repeats: int, action: Callable[[], object]) -> float:
    """The fastest of `repeats` runs of `action`, in seconds."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return min(timings)


def render_request(source: str) -> dict:
    """One question with the weather tool offered and thinking on."""
    return {"template": source, "messages": [{"role": "user", "content": "What's the weather in Rio?"}],
            "tools": [WEATHER_TOOL], "enable_thinking": True, "now": "2025-06-15T10:30:00Z"}


def bench_renders(oracle: Oracle) -> dict[str, int]:
    """Print the render time of every upstream template; return each template's handle."""
    rows, handles = [], {}
    for path in sorted((ensure_source() / "models" / "templates").glob("*.jinja")):
        request = render_request(path.read_text(encoding="utf-8"))
        handles[path.name] = oracle.render(request).handle
        seconds = best_of(REPEATS, functools.partial(oracle.render, request))
        rows.append((path.name, f"{seconds * 1000:.2f}"))
    times = [float(ms) for _, ms in rows]
    print(tabulate(rows, headers=["template", "render ms (best of 3)"], tablefmt="github"))
    print(f"\n{len(rows)} templates: total {sum(times):.0f} ms, median {statistics.median(times):.2f} ms, "
          f"max {max(times):.2f} ms\n")
    return handles


def throughput(label: str, handles: list[int], reply: str, partial: bool, oracle: Oracle) -> tuple:
    """Parse one reply under every handle, repeatedly; a table row of replies/s and MB/s."""
    rounds = 3
    started = time.perf_counter()
    for _ in range(rounds):
        for handle in handles:
            oracle.parse(handle, reply, partial=partial)
    seconds = time.perf_counter() - started
    count = rounds * len(handles)
    size = len(reply.encode("utf-8")) * count
    return (label, len(reply.encode("utf-8")), count, f"{count / seconds:.0f}", f"{size / seconds / 1e6:.2f}")


def bench_parses(oracle: Oracle, handles: dict[str, int]) -> None:
    """Print parse throughput over all templates and for a Qwen3 tool call, and stream throughput."""
    every = list(handles.values())
    qwen3 = [handles["Qwen-Qwen3-0.6B.jinja"]]
    rows = [
        throughput("content 80 B, all 70 templates", every, PROSE, False, oracle),
        throughput("content 8 KB, all 70 templates", every, PROSE * 100, False, oracle),
        throughput("content 8 KB partial, all 70 templates", every, PROSE * 100, True, oracle),
        throughput("Qwen3 think + tool call", qwen3 * 50, QWEN3_CALL, False, oracle),
    ]
    print(tabulate(rows, headers=["parse", "reply bytes", "parses", "replies/s", "MB/s"], tablefmt="github"))
    reply = QWEN3_CALL
    seconds = best_of(REPEATS, lambda: oracle.stream(qwen3[0], reply, list(range(len(reply)))))
    print(f"\nstream of the Qwen3 tool call at every code point ({len(reply)} partial parses + 1): "
          f"{seconds * 1000:.1f} ms, {len(reply) / seconds:.0f} partial parses/s")


def main() -> None:
    """Run the oracle benchmarks and print their figures."""
    with Oracle(timeout=120) as oracle:
        print(f"oracle: {oracle.info()}\n")
        handles = bench_renders(oracle)
        bench_parses(oracle, handles)


if __name__ == "__main__":
    main()
