"""The mutation check's call trace: which templates' sessions run each function, also after a RecursionError
made Python drop the tracer."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from harness.sweep_trace import IMPORT, CallTrace

MODULE = '''def deep(n):
    return deep(n + 1)


def read(text):
    return text.upper()
'''


def test_a_session_after_a_recursion_error_is_still_traced(tmp_path: Path) -> None:
    (tmp_path / "parser.py").write_text(MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("traced_parser", tmp_path / "parser.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    trace = CallTrace(tmp_path)
    previous = sys.gettrace()
    try:
        trace.begin("a.jinja")
        module.read("x")
        try:
            module.deep(0)
        except RecursionError:
            pass
        dropped = sys.gettrace() is None
        trace.begin("b.jinja")
        module.read("y")
    finally:
        sys.settrace(previous)
    assert dropped, "the RecursionError was expected to drop the tracer"
    assert ("parser.py", 5) in trace.calls["a.jinja"] and ("parser.py", 5) in trace.calls["b.jinja"]
    assert IMPORT not in trace.calls
