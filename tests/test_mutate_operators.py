"""Mutants: the operator set over Python and other languages, applied to a copy, equivalence by bytecode."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.mutants import Mutant, equivalent_by_bytecode, mutants_of, python_mutants, text_mutants
from reports.mutate import (
    Reference,
    Settings,
    Sweep,
    narrowed,
    reached,
    sample,
    served_templates,
    spread,
    sweep_limit,
    sweeps_of,
    template_selection,
)

SOURCE = '''"""A module docstring: never mutated."""


def pick(value: int, items: list[str]) -> str | None:
    """A docstring: never mutated."""
    if value == 0 and items:
        return items[0]
    for item in items:
        if item in ("a", "b"):
            break
    if False:
        print("dead")
    return None
'''


def by_operator(mutants: list[Mutant]) -> dict[str, list[tuple[str, str]]]:
    """The (original, replacement) pairs of each operator."""
    found: dict[str, list[tuple[str, str]]] = {}
    for mutant in mutants:
        found.setdefault(mutant.operator, []).append((mutant.original, mutant.replacement))
    return found


def test_each_operator_changes_one_expression_or_statement() -> None:
    found = by_operator(python_mutants("pick.py", SOURCE))
    assert ("value == 0", "(value != 0)") in found["compare"]
    assert ('item in ("a", "b")', "(item not in ('a', 'b'))") in found["compare"]
    assert ("value == 0 and items", "(value == 0 or items)") in found["boolean"]
    assert ("0", "(1)") in found["constant"] and ('"a"', "('')") in found["constant"]
    assert ("value == 0 and items", "not (value == 0 and items)") in found["condition"]
    assert ("return items[0]", "return None") in found["return"]
    assert ("break", "pass") in found["deletion"] and ('print("dead")', "pass") in found["deletion"]


def test_docstrings_and_annotations_are_left_alone() -> None:
    mutants = python_mutants("pick.py", SOURCE)
    assert not [mutant for mutant in mutants if "docstring" in mutant.original]
    assert not [mutant for mutant in mutants if mutant.line == 4 and mutant.original in ("int", "str", "None")]


def test_every_mutant_applies_to_its_source_and_compiles() -> None:
    for mutant in python_mutants("pick.py", SOURCE):
        changed = mutant.apply(SOURCE)
        assert changed != SOURCE
        compile(changed, "pick.py", "exec")
        assert mutant.diff(SOURCE).startswith("--- a/pick.py\n+++ b/pick.py\n")


def test_a_mutant_refuses_a_source_that_changed() -> None:
    mutant = next(m for m in python_mutants("pick.py", SOURCE) if m.operator == "return")
    with pytest.raises(ValueError, match="no longer there"):
        mutant.apply(SOURCE.replace("return items[0]", "return items[1]"))


def test_ids_are_stable_and_distinct() -> None:
    first, second = python_mutants("pick.py", SOURCE), python_mutants("pick.py", SOURCE)
    assert [m.id for m in first] == [m.id for m in second]
    assert len({m.id for m in first}) == len(first)


def test_ids_survive_edits_elsewhere_in_the_file() -> None:
    edited = SOURCE.replace('"""A module docstring: never mutated."""\n', '"""A module docstring."""\n\nLIMIT = 3\n')
    before = {m.id: m.original for m in python_mutants("pick.py", SOURCE)}
    after = {m.id: m.original for m in python_mutants("pick.py", edited)}
    assert before.items() <= after.items()


def test_a_change_the_compiler_folds_away_is_equivalent() -> None:
    mutants = python_mutants("pick.py", SOURCE)
    dead = next(m for m in mutants if m.original == 'print("dead")')
    live = next(m for m in mutants if m.original == "break")
    assert equivalent_by_bytecode(dead, SOURCE)
    assert not equivalent_by_bytecode(live, SOURCE)


def test_other_languages_get_line_operators() -> None:
    source = "// a == b in a comment\nif (a === b && c != 0) { return true; }\n"
    found = by_operator(text_mutants("x.mjs", source))
    assert ("&&", "||") in found["boolean"] and ("true", "false") in found["constant"]
    assert ("!=", "==") in found["compare"] and ("0", "1") in found["constant"]
    assert all(mutant.line == 2 for mutant in text_mutants("x.mjs", source))
    for mutant in text_mutants("x.mjs", source):
        assert mutant.apply(source).splitlines()[0] == source.splitlines()[0]


def test_files_by_suffix_and_a_seeded_sample(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "b.mjs").write_text("x = a == b;\n", encoding="utf-8")
    python = mutants_of(tmp_path, tmp_path / "a.py")
    assert python == python_mutants("a.py", SOURCE)
    assert [m.operator for m in mutants_of(tmp_path, tmp_path / "b.mjs")] == ["compare"]
    drawn = sample(python, 5, seed=3)
    assert drawn == sample(python, 5, seed=3) and len(drawn) == 5
    assert drawn == sorted(drawn, key=python.index)


def test_a_syntax_module_serves_its_syntax_templates() -> None:
    syntaxes = {"hermes": ["Qwen-Qwen3-0.6B.jinja", "NousResearch-Hermes.jinja"]}
    hermes = Mutant("syntaxes/hermes.py", 1, 0, 1, 1, "constant", "1", "2")
    core = Mutant("peg.py", 1, 0, 1, 1, "constant", "1", "2")
    assert served_templates(hermes, syntaxes) == syntaxes["hermes"]
    assert served_templates(core, syntaxes) is None
    assert template_selection(syntaxes["hermes"], None) == "Qwen-Qwen3-0.6B.jinja,NousResearch-Hermes.jinja"
    assert template_selection(syntaxes["hermes"], "Qwen-*") == "Qwen-Qwen3-0.6B.jinja"
    assert template_selection(syntaxes["hermes"], "Llama*") == ""
    assert template_selection(None, "Qwen-*") == "Qwen-*"


def test_a_mutant_is_swept_over_the_templates_that_run_its_function(tmp_path: Path) -> None:
    (tmp_path / "core.py").write_text("LIMIT = 1\n\n\ndef read(text):\n    return text[:LIMIT]\n", encoding="utf-8")
    syntax_of = {"a1.jinja": "a", "a2.jinja": "a", "b1.jinja": "b", "c1.jinja": "c"}
    in_function = Mutant("core.py", 5, 21, 5, 26, "constant", "LIMIT", "2")
    at_import = Mutant("core.py", 1, 8, 1, 9, "constant", "1", "2")
    trace = {"core.py": {1: {""}, 4: {"a1.jinja", "b1.jinja", "c1.jinja"}}}
    settings = Settings(source=tmp_path, out=tmp_path / "out")
    assert narrowed(in_function, None, trace, settings, syntax_of) == "a1.jinja,b1.jinja,c1.jinja"
    assert narrowed(in_function, "a*", trace, settings, syntax_of) == "a1.jinja"
    assert narrowed(at_import, None, trace, settings, syntax_of) is None
    assert narrowed(in_function, None, {}, settings, syntax_of) is None
    capped = replace(settings, max_templates=2)
    two = narrowed(in_function, None, trace, capped, syntax_of)
    assert two == narrowed(in_function, None, trace, capped, syntax_of) and len(two.split(",")) == 2
    assert spread(["a1.jinja", "a2.jinja", "b1.jinja"], 2, "x", syntax_of) in (
        ["a1.jinja", "b1.jinja"], ["a2.jinja", "b1.jinja"]
    )


def test_a_capped_mutant_then_reads_and_streams_every_template_running_its_function(tmp_path: Path) -> None:
    (tmp_path / "core.py").write_text("LIMIT = 1\n\n\ndef read(text):\n    return text[:LIMIT]\n", encoding="utf-8")
    syntax_of = {"a1.jinja": "a", "b1.jinja": "b", "c1.jinja": "c"}
    mutant = Mutant("core.py", 5, 21, 5, 26, "constant", "LIMIT", "2")
    trace = {"core.py": {4: {"a1.jinja", "b1.jinja", "c1.jinja"}}}
    settings = Settings(source=tmp_path, out=tmp_path / "out")
    assert sweeps_of(mutant, None, trace, settings, syntax_of) == [Sweep(None)]
    streamed, whole = sweeps_of(mutant, None, trace, replace(settings, max_templates=2), syntax_of)
    assert whole == Sweep(None, "whole,char3")
    assert streamed.chunking is None and len(str(streamed.templates).split(",")) == 2
    assert sweeps_of(mutant, "a*,b*", trace, replace(settings, max_templates=1), syntax_of)[1] == Sweep(
        "a1.jinja,b1.jinja", "whole,char3"
    )
    assert sweeps_of(mutant, None, trace, replace(settings, max_templates=3), syntax_of) == [Sweep(None)]


def test_a_syntax_module_reaches_the_templates_whose_syntax_choice_runs_its_detect(tmp_path: Path) -> None:
    source = tmp_path / "syntaxes"
    source.mkdir()
    (source / "b.py").write_text("def detect(t):\n    return 'b' in t\n\n\ndef build(t):\n    return t\n",
                                 encoding="utf-8")
    in_detect = Mutant("syntaxes/b.py", 2, 11, 2, 14, "constant", "'b'", "''")
    in_build = Mutant("syntaxes/b.py", 6, 11, 6, 12, "return", "t", "None")
    trace = {"syntaxes/b.py": {1: {"", "a1.jinja", "b1.jinja", "c1.jinja"}, 5: {"b1.jinja"}}}
    assert reached(in_detect, "b1.jinja", trace, None) == "a1.jinja,b1.jinja,c1.jinja"
    assert reached(in_detect, "b1.jinja", trace, "a*,b*") == "a1.jinja,b1.jinja"
    assert reached(Mutant("core.py", 1, 0, 1, 1, "constant", "1", "2"), None, trace, None) is None
    syntax_of = {"a1.jinja": "a", "b1.jinja": "b", "c1.jinja": "c"}
    settings = Settings(source=tmp_path, out=tmp_path / "out")
    assert narrowed(in_build, reached(in_build, "b1.jinja", trace, None), trace, settings, syntax_of) == "b1.jinja"
    assert narrowed(in_detect, reached(in_detect, "b1.jinja", trace, None), trace, settings, syntax_of) == (
        "a1.jinja,b1.jinja,c1.jinja"
    )


def test_a_mutant_sweep_may_take_five_times_the_unmutated_parsers_time_and_no_more_than_the_timeout(
    tmp_path: Path,
) -> None:
    reference = Reference(baseline=None, unexpected=frozenset(), seconds_per_template=20.0, templates=10,  # type: ignore[arg-type]
                          follow_up_share=0.5)
    settings = Settings(source=tmp_path, out=tmp_path / "out")
    assert sweep_limit(Sweep("a.jinja,b.jinja"), reference, settings) == 5 * (8 + 2 * 20)
    assert sweep_limit(Sweep(None, "whole,char3"), reference, settings) == 5 * (8 + 10 * 20 * 0.5)
    assert sweep_limit(Sweep("a.jinja"), replace(reference, seconds_per_template=0.5), settings) == 60
    assert sweep_limit(Sweep(None), reference, replace(settings, timeout=300)) == 300
