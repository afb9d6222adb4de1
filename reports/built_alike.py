"""Survivors of a mutation check of reply/ that are equivalent on the pinned templates because they build every
reader as the unmutated parser does. A mutant of template analysis (code that reads the template alone, never a
request's tools, while a reader is built) whose readers, for every session the full profile plans, have the
same syntax, grammar, markers and reasoning tags (`reports.same_grammars`) reads every reply of those sessions
as the unmutated parser does; only a template outside the index could tell it apart. Code that builds grammars
from tools is left out: a tool schema the corpus lacks could tell its mutants apart (a corpus hole, not an
equivalent)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.mutants import SYNTAX_DIRECTORY, Mutant
from reports.same_grammars import changed, in_child

TEMPLATE_ANALYSIS_FILES = frozenset({"analysis.py", "json_calls.py", "rendering.py", "routes.py", "template.py"})
"""The modules of reply/ that read templates alone: differential analysis, JSON call layouts, rendering,
routes and the template's own properties."""
DETECT = "detect"
PROFILE = "full"
REASON = (
    "template analysis that builds the reader of every session the full profile plans for the checked templates "
    "as the unmutated parser does (syntax, grammar, markers, reasoning tags; reports.same_grammars): no reply "
    "tells it apart on them, another template might"
)


def enclosing_name(module: Path, line: int) -> str | None:
    """The name of the innermost function of a module holding `line` (None at module or class level)."""
    found: tuple[int, str] | None = None
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.lineno <= line <= (node.end_lineno or node.lineno)
                and (found is None or node.lineno > found[0])):
            found = (node.lineno, node.name)
    return None if found is None else found[1]


def analyses_template(mutant: Mutant, source: Path) -> bool:
    """Whether the mutant lies in template analysis of the reply package at `source`: a module of
    TEMPLATE_ANALYSIS_FILES, or the `detect` of a syntax module."""
    parts = Path(mutant.file).parts
    if len(parts) == 2 and parts[0] == SYNTAX_DIRECTORY:
        return enclosing_name(source / mutant.file, mutant.line) == DETECT
    return len(parts) == 1 and parts[0] in TEMPLATE_ANALYSIS_FILES


def built_alike(mutants: Sequence[Mutant], source: Path, project: Path, jobs: int,
                templates: str = "*") -> set[str]:
    """The ids of the mutants of template analysis in the reply package at `source` that build every session's
    reader (of the templates, in the full profile) as the unmutated package does."""
    candidates = [mutant for mutant in mutants if analyses_template(mutant, source)]
    if not candidates:
        return set()
    before = in_child(source.parent, templates, PROFILE, project)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        alike = list(pool.map(lambda mutant: not changed(mutant, source, templates, PROFILE, before, project),
                              candidates))
    return {mutant.id for mutant, same in zip(candidates, alike) if same}
