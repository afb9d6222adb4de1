"""The check behind the equivalents "every quick reply reads alike": a mutant of reply/ is told apart from the
unmutated parser exactly where some reply of a session reads otherwise, whole or streamed."""

from __future__ import annotations

from reports.same_readings import differing
from tests.test_same_grammars import SOURCE, mutant_of

GEMMA4 = "google-gemma-4-31B-it-interleaved.jinja"


def test_a_cache_size_reads_alike_and_a_value_bug_does_not() -> None:
    cache_size = mutant_of("growth.py", "64", "(65)")
    containers = mutant_of("syntaxes/gemma4.py", "name in (ARRAY, DICT)", "not (")
    found = differing([cache_size, containers], GEMMA4, "quick")
    assert found[cache_size.id] == []
    assert found[containers.id] and all(key.startswith(GEMMA4 + " ") for key in found[containers.id])


def test_the_mutated_copies_leave_the_working_tree_alone() -> None:
    before = (SOURCE / "growth.py").read_bytes()
    differing([mutant_of("growth.py", "64", "(65)")], GEMMA4, "quick", jobs=1)
    assert (SOURCE / "growth.py").read_bytes() == before
