"""The caches of functions of texts keep short texts only."""

from __future__ import annotations

from harness.short_cache import cached_when_short


def test_short_texts_are_read_once_and_long_ones_every_time() -> None:
    calls: list[str] = []

    @cached_when_short(maxsize=8, longest=10)
    def length(first: str, second: str) -> int:
        calls.append(first + second)
        return len(first) + len(second)

    assert [length("abc", "de"), length("abc", "de")] == [5, 5]
    assert [length("x" * 6, "y" * 6), length("x" * 6, "y" * 6)] == [12, 12]
    assert calls == ["abcde", "x" * 6 + "y" * 6, "x" * 6 + "y" * 6]
