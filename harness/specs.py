"""Naming Python objects on the command line: `pkg.module:attribute` or `path/to/file.py:attribute`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def import_module(name: str) -> ModuleType:
    """A module by dotted name, or from a .py file (registered under the file's stem)."""
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name).resolve()
    if path.stem in sys.modules and getattr(sys.modules[path.stem], "__file__", None) == str(path):
        return sys.modules[path.stem]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None or not path.exists():
        raise ImportError(f"no Python file at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def import_object(spec: str, what: str) -> tuple[ModuleType, Any]:
    """The module and attribute a `module:attribute` spec names (the module when none is given)."""
    module_name, _, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "")
    try:
        module = import_module(module_name)
    except ImportError as error:
        raise ValueError(f"{what} {spec!r}: cannot import {module_name}: {error}") from error
    if not attribute:
        return module, module
    if not hasattr(module, attribute):
        raise ValueError(f"{what} {spec!r}: {module_name} has no attribute {attribute!r}")
    return module, getattr(module, attribute)
