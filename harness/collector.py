"""How a process that reads sessions runs Python's cyclic garbage collector."""

from __future__ import annotations

import gc

READING_THRESHOLDS = (20_000, 10, 10)
"""The collector's thresholds while sessions are read: a reading allocates and drops short-lived containers
(parse results, nodes, snapshots) in great numbers, and at Python's default of 700 the survivors of young
collections soon trigger walks over the whole heap of kept readers, records and cached reads."""


class ReadingCollector:
    """The cyclic collector tuned for reading sessions and put back afterwards: what the process built before
    (modules, grammars, the plan) is frozen out of its reach, and the young generation grows to
    READING_THRESHOLDS[0] objects before it is collected."""

    def __init__(self) -> None:
        self.previous: tuple[int, int, int] | None = None

    def start(self) -> None:
        """Collect once, freeze what survives, and raise the thresholds."""
        if self.previous is not None:
            return
        self.previous = gc.get_threshold()
        gc.collect()
        gc.freeze()
        gc.set_threshold(*READING_THRESHOLDS)

    def stop(self) -> None:
        """Put the thresholds back and return the frozen objects to the collector."""
        if self.previous is None:
            return
        gc.set_threshold(*self.previous)
        gc.unfreeze()
        self.previous = None
