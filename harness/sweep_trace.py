"""A sweep run in this process with a call tracer on one source directory: which templates' sessions called each
function of it, by the function's first line (the mutation check sweeps a mutant over the templates that run the
function holding it).

    python -m harness.sweep_trace SOURCE_DIR TRACE_JSON sweep ARGS...   (the sweep needs -n 0)
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

IMPORT = ""
"""The 'template' of code run outside any session (module bodies run at import)."""


class CallTrace:
    """The functions (first lines) of the files under one directory that run, by the template of the session
    running them."""

    def __init__(self, source: Path) -> None:
        self.prefix = str(source.resolve()) + "/"
        self.template = IMPORT
        self.calls: dict[str, set[tuple[str, int]]] = {}
        self.traced: dict[CodeType, str | None] = {}

    def relative(self, code: CodeType) -> str | None:
        """The code's file relative to the source directory, or None when it lies outside."""
        if code not in self.traced:
            name = str(Path(code.co_filename).resolve())
            self.traced[code] = name[len(self.prefix):] if name.startswith(self.prefix) else None
        return self.traced[code]

    def on_call(self, frame: FrameType, event: str, arg: Any) -> None:
        """The global tracer: record the first line of each code object of the source that is called (a
        function, a module body, a comprehension), no line events."""
        file = self.relative(frame.f_code)
        if file is not None:
            self.calls.setdefault(self.template, set()).add((file, frame.f_code.co_firstlineno))

    def begin(self, template: str) -> None:
        """A session of `template` starts: name it, and trace this thread anew (Python drops a tracer that
        raised, as one does on a RecursionError deep in a render or a parse)."""
        self.template = template
        sys.settrace(self.on_call)

    def install(self) -> None:
        """Trace every thread from now on (the parser imported after this, so its module bodies count as run at
        import), and name the template of each session the sweep runs."""
        threading.settrace(self.on_call)
        sys.settrace(self.on_call)
        from harness.runner import SessionResult, SessionRunner

        trace = self
        original = SessionRunner.run

        def run(self: SessionRunner) -> SessionResult:
            trace.begin(self.planned.session.template)
            try:
                return original(self)
            finally:
                trace.template = IMPORT

        SessionRunner.run = run  # type: ignore[method-assign]

    def as_json(self) -> dict[str, dict[str, list[str]]]:
        """{file: {line: [templates]}}, sorted."""
        found: dict[str, dict[int, set[str]]] = {}
        for template, calls in self.calls.items():
            for file, line in calls:
                found.setdefault(file, {}).setdefault(line, set()).add(template)
        return {
            file: {str(line): sorted(found[file][line]) for line in sorted(found[file])} for file in sorted(found)
        }


def read_trace(path: Path) -> dict[str, dict[int, set[str]]]:
    """A trace file as {file: {line: {templates}}} ('' for lines run at import)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {file: {int(line): set(names) for line, names in lines.items()} for file, lines in data.items()}


def main(argv: list[str]) -> int:
    """Run `chatparity sweep ARGS` traced, then write the trace."""
    source, out, command, *rest = argv
    if command != "sweep":
        print(f"usage: python -m harness.sweep_trace SOURCE TRACE_JSON sweep ARGS (not {command!r})", file=sys.stderr)
        return 2
    trace = CallTrace(Path(source))
    trace.install()
    from harness import sweep_command

    try:
        status = sweep_command.main(rest, prog="chatparity sweep")
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    Path(out).write_text(json.dumps(trace.as_json(), ensure_ascii=False) + "\n", encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
