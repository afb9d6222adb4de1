"""Reply syntaxes, one module each. Every module in this package defines `SYNTAX = Syntax(...)` named like
the module, which is named like llama.cpp's route when a specialized route serves it; the registry imports
them all and picks, for a template, the first (by `order`) whose `route` is the route llama.cpp takes for
the template and whose `detect` accepts it."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from reply.chat import ChatBuilder, Mapped, map_nodes
from reply.peg import Node, Parser
from reply.request import Request
from reply.template import Template


@dataclass(frozen=True)
class Syntax:
    """One reply syntax: which templates it reads and the grammar it reads them with."""

    name: str
    route: str
    detect: Callable[[Template], bool]
    build: Callable[[ChatBuilder, Template, Request], Parser]
    call_starts: Callable[[Template, Request], list[str]] = field(default=lambda t, r: [])
    order: int = 100
    mapper: Callable[[str, tuple[Node, ...]], Mapped] = map_nodes
    held_markers: Callable[[Template, Request], list[str]] | None = None


@lru_cache(maxsize=1)
def registered() -> tuple[Syntax, ...]:
    """Every syntax module of this package, in detection order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        syntax = getattr(module, "SYNTAX", None)
        if not isinstance(syntax, Syntax):
            raise TypeError(f"reply/syntaxes/{info.name}.py defines no SYNTAX = Syntax(...)")
        if syntax.name != info.name:
            raise ValueError(f"reply/syntaxes/{info.name}.py names its syntax {syntax.name!r}: "
                             f"a syntax module is named like its syntax, so no two modules share a name")
        found.append(syntax)
    return tuple(sorted(found, key=lambda s: (s.order, s.name)))


def select(template: Template) -> Syntax | None:
    """The syntax that reads this template, or None."""
    return selected(template, registered())


@lru_cache(maxsize=64)
def selected(template: Template, syntaxes: tuple[Syntax, ...]) -> Syntax | None:
    """The first of `syntaxes` that reads this template, or None (worked out once per template and registry)."""
    for syntax in syntaxes:
        if syntax.route == template.route and syntax.detect(template):
            return syntax
    return None
