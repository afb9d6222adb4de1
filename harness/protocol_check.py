"""A parser program driven through a fixed set of protocol exchanges, each answer checked against the
protocol's JSON schema and the rules it cannot state (snapshot counts, a final when finished, a new reader per
open), without llama.cpp."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from chatparity.model import ParserCrashed, ParserTimeout
from harness.command_parser import Program

SCHEMA = json.loads(Path(__file__).with_name("protocol.schema.json").read_text(encoding="utf-8"))
TRANSCRIPT = Path(__file__).with_name("protocol_transcript.jsonl")
LONG_TEXT = "It is sunny in Rio. " * 5000
PARSES = (
    ("", False),
    ("", True),
    ("\n\n", False),
    (" It is sunny,\tsays the\r\nforecast. ", False),
    ("東京 😀 \u00e9", False),
    ("<think>", True),
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "R', True),
    (LONG_TEXT, False),
)
"""Whole reads: empty, whitespace, multi-byte and astral text, cut inside a marker and a call, a long line."""
STREAMS = (
    (("It is ", "sunny."), True),
    (("😀", "東", "京", " é"), True),
    (("<th", "ink>", "Rio"), False),
    (("It is sunny in Rio.",), True),
)
"""Streams: pieces of text, astral and multi-byte chunks, a cut stream, a single chunk."""


@dataclass(frozen=True)
class Violation:
    """One way an answer breaks the protocol: the request, the field of the answer, and what was wrong."""

    request: str
    field: str
    problem: str

    def line(self) -> str:
        """The violation on one line."""
        return f"{self.request}: {self.field}: {self.problem}"


@dataclass
class Report:
    """What a check found: its violations, notes that are no violation, and how many requests it sent."""

    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    requests: int = 0
    unchecked: str = ""
    """Why no reader request was checked (every session declined), '' when they were."""


def shipped_sessions() -> list[dict[str, Any]]:
    """The sessions of the shipped transcript's `open` requests."""
    lines = TRANSCRIPT.read_text(encoding="utf-8").splitlines()
    requests = [json.loads(line)["request"] for line in lines]
    return [request["session"] for request in requests if request["op"] == "open"]


def field_path(error: ValidationError) -> str:
    """Where in the answer a schema error is, e.g. `reading.tool_calls[0].arguments` (`(answer)`: the top)."""
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path.lstrip(".") or "(answer)"


def most_specific(error: ValidationError) -> ValidationError:
    """Of an error under `oneOf` (a reading: a message or a rejection), the one deepest in the answer: the
    branch the answer meant to follow (the first branch's on a tie)."""
    if not error.context:
        return error
    return most_specific(max(error.context, key=lambda inner: len(inner.absolute_path)))


def schema_violations(request: str, name: str, answer: Any) -> list[Violation]:
    """The ways `answer` breaks `$defs.<name>`, each reported where it is most specific."""
    validator = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": SCHEMA["$defs"]})
    found = []
    for error in validator.iter_errors(answer):
        specific = most_specific(error)
        found.append(Violation(request, field_path(specific), specific.message))
    return found


def quoted(text: str, size: int = 24) -> str:
    """A text as JSON, cut to `size` characters with its length when longer."""
    if len(text) <= size:
        return json.dumps(text, ensure_ascii=False)
    return f"{json.dumps(text[:size], ensure_ascii=False)}… ({len(text)} characters)"


def listed(chunks: Sequence[str], size: int = 40) -> str:
    """Chunks as a JSON list, cut to `size` characters with their count when longer."""
    text = json.dumps(list(chunks), ensure_ascii=False)
    return text if len(text) <= size else f"{text[:size]}… ({len(chunks)} chunks)"


@dataclass
class Reader:
    """A reader the check opened: its session, the program's name for it, and the program run that has it."""

    session: dict[str, Any]
    handle: Any
    generation: int


class ProtocolCheck:
    """One check of one program: each request sent, each answer judged, findings kept in `report`."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.report = Report()

    def ask(
        self, op: str, detail: str, errors_allowed: bool = False, **fields: Any
    ) -> tuple[str, dict[str, Any] | None]:
        """The request's label (`OP #ID (DETAIL)`) and the program's answer, or None after noting why there is
        none to judge (no JSON answer with the request's id: a violation; an error answer: a violation unless
        `errors_allowed`)."""
        label = f"{op} #{self.program.next_id + 1}" + (f" ({detail})" if detail else "")
        self.report.requests += 1
        try:
            answer = self.program.answer(op, **fields)
        except (ParserCrashed, ParserTimeout) as error:
            self.report.violations.append(Violation(label, "(answer)", str(error).removeprefix(f"{op}: ")))
            return label, None
        if "error" in answer:
            if errors_allowed:
                self.report.notes.append(f"{label}: answered an error: {answer['error']}")
            else:
                self.report.violations.extend(schema_violations(label, "error_answer", answer))
                problem = f"an error answer: {answer['error']}"
                self.report.violations.append(Violation(label, "error", problem))
            return label, None
        self.report.violations.extend(schema_violations(label, f"answer_to_{op}", answer))
        return label, answer

    def open(self, sessions: Sequence[dict[str, Any]], detail: str) -> tuple[str, Reader | None]:
        """The label of the last `open` sent and a reader of the first session the program opens (each
        declined one a note), None when it opens none."""
        label = "open"
        for number, session in enumerate(sessions, 1):
            where = f"{detail}session {number}, {session['template']}"
            label, answer = self.ask("open", where, session=session)
            if answer is not None and "reader" in answer:
                return label, Reader(session, answer["reader"], self.program.generation)
            if answer is not None:
                self.report.notes.append(f"{label}: unsupported: {answer.get('unsupported')}")
        return label, None

    def handle(self, reader: Reader) -> Any:
        """The reader's handle, opened again first when the program has restarted since."""
        if reader.generation != self.program.generation or self.program.process is None:
            _, answer = self.ask("open", "again, after a restart", session=reader.session)
            if answer is not None and "reader" in answer:
                reader.handle, reader.generation = answer["reader"], self.program.generation
        return reader.handle

    def parse(self, reader: Reader, text: str, partial: bool) -> None:
        """One `parse`; its answer judged by the schema."""
        handle = self.handle(reader)
        detail = f"text {quoted(text)}, partial {json.dumps(partial)}"
        self.ask("parse", detail, reader=handle, text=text, partial=partial)

    def stream(self, reader: Reader, chunks: Sequence[str], finish: bool) -> None:
        """One `stream`; a snapshot per chunk, and a final reading when finished."""
        handle = self.handle(reader)
        detail = f"chunks {listed(chunks)}, finish {json.dumps(finish)}"
        label, answer = self.ask("stream", detail, reader=handle, chunks=list(chunks), finish=finish)
        if answer is None:
            return
        snapshots = answer.get("snapshots")
        if isinstance(snapshots, list) and len(snapshots) != len(chunks):
            problem = f"{len(snapshots)} readings for {len(chunks)} chunks (one snapshot per chunk)"
            self.report.violations.append(Violation(label, "snapshots", problem))
        if finish and "final" not in answer:
            self.report.violations.append(Violation(label, "final", "missing (finish is true)"))

    def close(self, reader: Reader) -> None:
        """`close` (a program older than it may answer an error or `unsupported`: a note)."""
        label, answer = self.ask("close", "", errors_allowed=True, reader=self.handle(reader))
        if answer is not None and "unsupported" in answer:
            self.report.notes.append(f"{label}: unsupported: {answer['unsupported']}")

    def run(self, sessions: Sequence[dict[str, Any]]) -> Report:
        """Every exchange in order: info, open, parses, streams, a second reader beside the first, close."""
        self.ask("info", "", errors_allowed=True)
        _, first = self.open(sessions, "")
        if first is None:
            if not self.report.violations:
                self.report.unchecked = f"the program declines every session offered ({len(sessions)})"
            return self.report
        for text, partial in PARSES:
            self.parse(first, text, partial)
        for chunks, finish in STREAMS:
            self.stream(first, chunks, finish)
        label, second = self.open([first.session], "a second reader, ")
        if second is not None:
            if second.handle == first.handle and second.generation == first.generation:
                problem = f"{json.dumps(second.handle)} again: each open makes a new reader"
                self.report.violations.append(Violation(label, "reader", problem))
            self.parse(second, "It is sunny.", False)
            self.close(second)
        self.parse(first, "It is sunny.", False)
        self.close(first)
        return self.report


def check_program(command: str, sessions: Sequence[dict[str, Any]], timeout: float) -> Report:
    """Run the check on the program `command` starts (stopped at the end)."""
    program = Program(command, timeout)
    try:
        return ProtocolCheck(program).run(sessions)
    finally:
        program.stop()
