"""A cache of a pure function of texts that keeps short texts only: a cache of long ones (a long reply's
arguments at every prefix) would hold its whole size of them."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

T = TypeVar("T")
SHORT_TEXT = 4096
"""The most code points of text a cached call takes."""


def cached_when_short(
    maxsize: int, longest: int = SHORT_TEXT
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """`lru_cache(maxsize)` for the calls whose texts together hold at most `longest` code points; longer
    calls run uncached, so the cache holds at most `maxsize * longest` code points."""

    def decorate(function: Callable[..., T]) -> Callable[..., T]:
        cached = lru_cache(maxsize=maxsize)(function)

        @wraps(function)
        def call(*texts: str) -> T:
            if sum(map(len, texts)) <= longest:
                return cached(*texts)
            return function(*texts)

        return call

    return decorate
