"""The import graph of the project: no cycles between packages or files, and every import points down the
layers of architecture.md: the bottom (chatparity.model, .compiled, .files, .processes) < templates < corpora
< oracle, reply < harness < reports < the chatparity command line."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("chatparity", "templates", "corpora", "oracle", "reply", "harness", "reports", "peers")
BOTTOM = ("chatparity.model", "chatparity.compiled", "chatparity.files", "chatparity.processes")
LAYERS = {
    "chatparity.model": 0,
    "chatparity.compiled": 0,
    "chatparity.files": 0,
    "chatparity.processes": 0,
    "templates": 1,
    "corpora": 2,
    "oracle": 3,
    "reply": 3,
    "harness": 4,
    "reports": 5,
    "peers": 5,
    "chatparity": 6,
}


def modules() -> dict[str, Path]:
    """Every project module (tests and benchmarks aside) by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The project modules a module imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def layer(name: str) -> int:
    """The layer of a module: its own entry, else its package's."""
    return LAYERS.get(name, LAYERS[name.split(".")[0]])


Graph = dict[str, set[str]]


def graph() -> Graph:
    """The project's import graph: each module and the project modules it imports."""
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def edges(found: Graph) -> list[tuple[str, str]]:
    """Every import as (importer, imported)."""
    return [(a, b) for a, targets in sorted(found.items()) for b in sorted(targets)]


def cycle(found: Graph) -> list[str]:
    """One circle of imports, or [] when there is none."""
    try:
        graphlib.TopologicalSorter(found).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


def top(name: str) -> str:
    """A module's layer name: the bottom modules stand apart from the chatparity command line."""
    return name if name in BOTTOM else name.split(".")[0]


def test_no_file_cycles() -> None:
    """No module imports itself round a circle of files."""
    assert cycle(graph()) == []


def test_no_package_cycles() -> None:
    """No package imports itself round a circle of packages."""
    packages: Graph = {}
    for a, b in edges(graph()):
        packages.setdefault(top(a), set())
        if top(a) != top(b):
            packages[top(a)].add(top(b))
    assert cycle(packages) == []


def test_imports_point_down_the_layers() -> None:
    """Each import goes to a lower layer, or stays in its own package."""
    upward = [f"{a} -> {b}" for a, b in edges(graph()) if top(a) != top(b) and layer(b) >= layer(a)]
    assert upward == []


def test_the_bottom_imports_nothing_of_the_project() -> None:
    """chatparity.model (the shared words), chatparity.compiled (the compiled-template cache), chatparity.files
    (files written whole, file faults) and chatparity.processes (how a process ends with others) are the bottom,
    importing no project module."""
    assert all(graph()[name] == set() for name in BOTTOM)


def test_reply_is_a_library_of_its_own() -> None:
    """reply/ imports nothing of the harness, corpora, templates, oracle or reports (only the bottom modules)."""
    outside = sorted({b for a, b in edges(graph()) if top(a) == "reply" and top(b) not in ("reply", *BOTTOM)})
    assert outside == []


def test_the_checks_see_a_cycle() -> None:
    """The cycle check finds a circle when there is one."""
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) != []


def test_command_line_loads_commands_by_name() -> None:
    """The chatparity package imports only its own modules (the command line loads each command by name), so
    the package that holds the shared words is not also a package above every other."""
    reaching = sorted(f"{a} -> {b}" for a, b in edges(graph()) if top(a) == "chatparity" and not b.startswith("chatparity"))
    assert reaching == []
