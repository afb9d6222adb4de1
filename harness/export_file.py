"""The export file: llama.cpp's readings of a profile's cases as versioned JSON lines, written and checked.

The first line is the header (format, version, the oracle's identity, profile, selection); each line after it
is one case (or a session without one), its session id first so a reader finds a session's lines without
decoding the others."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatparity.files import fault, replacing
from chatparity.model import InputError, canonical_json
from harness.oracle_reads import OracleIdentity

FORMAT = "chatparity-export"
VERSION = 1
SESSION_AT = re.compile(rb'\{"session":"([0-9a-f]+)"')
HEADER_FIELDS: dict[str, type] = {
    "format": str, "version": int, "llama_cpp_commit": str, "llama_cpp_python_version": str,
    "sdist_sha256": str, "oracle_build": str, "profile": str, "chunkings": list, "selection": dict,
}
SESSION_FIELDS: dict[str, type] = {
    "session": str, "template": str, "template_sha256": str, "mode": str, "request": dict, "answers": list,
}
CASE_FIELDS: dict[str, type] = {
    "case": str, "reply": str, "partial": bool, "origin": str, "shape": str, "reading": dict, "chunkings": dict,
}
STREAM_FIELDS: dict[str, type] = {"chunks": list, "snapshots": list, "end": dict}


class ExportError(InputError, ValueError):
    """An export that is damaged or not one: its file, line and field in one line."""

    def __init__(self, path: Path, line: int, field: str, problem: str) -> None:
        super().__init__(f"{path}:{line}: {field}: {problem}")


def line_text(value: dict[str, Any]) -> str:
    """One line of the file: ASCII JSON, `session` (where the line has one) first, the other keys sorted."""
    rest = json.dumps({key: item for key, item in value.items() if key != "session"}, sort_keys=True,
                      separators=(",", ":"))
    if "session" not in value:
        return rest + "\n"
    return '{"session":' + json.dumps(value["session"]) + ("," + rest[1:] if len(rest) > 2 else "}") + "\n"


def header(identity: OracleIdentity, profile: str, chunkings: Iterable[str], selection: dict[str, Any]
           ) -> dict[str, Any]:
    """The header line's fields."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "llama_cpp_commit": identity.llama_cpp_commit,
        "llama_cpp_python_version": identity.version,
        "sdist_sha256": identity.sdist_sha256,
        "oracle_build": identity.build_id,
        "profile": profile,
        "chunkings": list(chunkings),
        "selection": selection,
    }


def write_export(path: Path, head: dict[str, Any], body: Iterable[dict[str, Any]]) -> int:
    """Write the header and the lines after it (each with `session` first) whole or not at all; how many of
    them are cases."""
    count = 0
    try:
        with replacing(path) as partial, partial.open("w", encoding="ascii") as out:
            out.write(line_text(head))
            for line in body:
                out.write(line_text(line))
                count += "case" in line
    except OSError as error:
        raise fault(path, error, "no export written: free space there or name another --out") from None
    return count


def checked(path: Path, line: int, data: dict[str, Any], fields: dict[str, type], prefix: str = "") -> None:
    """Raise an ExportError naming the first field of `fields` missing from `data` or of the wrong type."""
    for name, kind in fields.items():
        if name not in data:
            raise ExportError(path, line, prefix + name, "missing")
        if not isinstance(data[name], kind) or (kind is int and isinstance(data[name], bool)):
            raise ExportError(path, line, prefix + name, f"expected {kind.__name__}, got {type(data[name]).__name__}")


def decoded_line(path: Path, line: int, text: bytes) -> dict[str, Any]:
    """One line as a JSON object, or an ExportError."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise ExportError(path, line, "(line)", f"not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ExportError(path, line, "(line)", f"expected an object, got {type(data).__name__}")
    return data


def check_header(path: Path, data: dict[str, Any]) -> OracleIdentity:
    """The oracle identity of a header line, or an ExportError for a header of another format or version."""
    if data.get("format") != FORMAT:
        raise ExportError(path, 1, "format", f"expected {FORMAT!r}, got {data.get('format')!r}: not an export")
    if data.get("version") != VERSION:
        raise ExportError(path, 1, "version", f"expected {VERSION}, got {data.get('version')!r}")
    checked(path, 1, data, HEADER_FIELDS)
    return OracleIdentity(data["llama_cpp_python_version"], data["sdist_sha256"], data["llama_cpp_commit"],
                          data["oracle_build"])


def export_identity(path: Path) -> OracleIdentity:
    """The oracle identity an export's header names."""
    for _, text in lines(path):
        return check_header(path, decoded_line(path, 1, text))
    raise ExportError(path, 1, "(header)", "missing: the file is empty")


def check_case(path: Path, line: int, data: dict[str, Any]) -> None:
    """Raise an ExportError naming the first field of a line that is missing or malformed (a line without
    `case` is a session's without a case)."""
    checked(path, line, data, SESSION_FIELDS)
    for index, answer in enumerate(data["answers"]):
        if not (isinstance(answer, list) and len(answer) == 2 and isinstance(answer[0], list)):
            raise ExportError(path, line, f"answers[{index}]", "expected [parts, value]")
    if "case" not in data:
        return
    checked(path, line, data, CASE_FIELDS)
    for name, streams in data["chunkings"].items():
        if not isinstance(streams, list):
            raise ExportError(path, line, f"chunkings.{name}", "expected list")
        for index, stream in enumerate(streams):
            if not isinstance(stream, dict):
                raise ExportError(path, line, f"chunkings.{name}[{index}]", "expected dict")
            checked(path, line, stream, STREAM_FIELDS, f"chunkings.{name}[{index}].")


def lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's lines, numbered from 1; a file that cannot be read is an InputError."""
    try:
        with path.open("rb") as source:
            yield from enumerate(source, 1)
    except OSError as error:
        raise ExportError(path, 0, "(file)", f"cannot be read: {error.strerror or error}") from None


@dataclass(frozen=True)
class Export:
    """A checked export: its header and the sessions it holds."""

    header: dict[str, Any]
    sessions: tuple[str, ...]


def read_export(path: Path) -> Export:
    """Check every line of an export; an ExportError names the first damaged one."""
    head: dict[str, Any] | None = None
    sessions: dict[str, None] = {}
    for number, text in lines(path):
        data = decoded_line(path, number, text)
        if head is None:
            check_header(path, data)
            head = data
            continue
        check_case(path, number, data)
        if SESSION_AT.match(text) is None:
            raise ExportError(path, number, "session", "not the line's first field")
        sessions[data["session"]] = None
    if head is None:
        raise ExportError(path, 1, "(header)", "missing: the file is empty")
    return Export(head, tuple(sessions))


class SessionLines:
    """Where each session's lines start in an export, found once, so a session's answers are read alone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.starts: dict[bytes, list[tuple[int, int]]] = {}
        offset = 0
        for number, text in lines(path):
            found = SESSION_AT.match(text)
            if found is not None:
                self.starts.setdefault(found.group(1), []).append((number, offset))
            offset += len(text)

    def answers(self, session: str) -> dict[str, Any]:
        """The answers the export holds for one session's cases, by their parts as canonical JSON."""
        answers: dict[str, Any] = {}
        try:
            with self.path.open("rb") as source:
                for number, offset in self.starts.get(session.encode("ascii"), []):
                    source.seek(offset)
                    for parts, value in decoded_line(self.path, number, source.readline())["answers"]:
                        answers[canonical_json(parts)] = value
        except OSError as error:
            raise ExportError(self.path, 0, "(file)", f"cannot be read: {error.strerror or error}") from None
        return answers
