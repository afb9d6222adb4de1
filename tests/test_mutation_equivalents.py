"""The mutation equivalents file names only mutants `chatparity mutate` still makes of reply/."""

from __future__ import annotations

from pathlib import Path

from reports.mutate import all_mutants, equivalents_file

PROJECT = Path(__file__).resolve().parent.parent
EQUIVALENTS = PROJECT / "reports" / "mutation_equivalents.toml"


def test_every_listed_equivalent_is_still_generated() -> None:
    """An id no mutant of reply/ has any more is stale: the code it named changed, and its reason with it."""
    generated = {mutant.id for mutant in all_mutants(PROJECT / "reply", "*.py")}
    listed = equivalents_file(EQUIVALENTS)
    assert listed
    assert sorted(set(listed) - generated) == []
