"""Corpus files: hand-written replies as JSON lines, each read into a planned session and a reply."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatparity.model import (
    PROBLEMS,
    REASONING_FORMAT,
    REASONING_FORMATS,
    STRUCTURAL_CHECKS,
    Message,
    Mode,
    Reply,
    Session,
    ToolCall,
    ToolMode,
    canonical_json,
)
from corpora.conversations import Conversation, messages
from corpora.jinja_env import error_text
from corpora.planning import PlannedSession, checked_source
from corpora.prompts import render_chat
from corpora.tools import STANDARD_TOOLS
from corpora.turns import generation_prompt, opens_thought
from templates.index import TemplateEntry, load_index

REQUIRED = ("id", "template", "thinking", "tools", "kwargs", "reply", "partial")
MAX_NESTING = 100
"""How deep a corpus line's values (a tool's schema, a call's arguments) may nest: enough for any tool, and
shallow enough for every reader of them (the schema check, jinja2, llama.cpp) to follow."""
JSON_TOKEN = re.compile(r'"((?:[^"\\]++|\\.)*+)"(\s*:)?|[\[\]{}]')
"""A JSON string (group 1, with group 2 when it is a key) or a bracket."""
OPTIONAL = ("messages", "tool_defs", "truth", "note", "exempt", "meant_problems", "reasoning_format")


class CorpusFileError(ValueError):
    """A corpus file line that is not a valid reply, naming the file, the line and the field."""

    def __init__(self, path: Path, line: int, field_name: str, problem: str) -> None:
        super().__init__(f"{path}:{line}: field {field_name!r}: {problem}")
        self.path, self.line, self.field_name, self.problem = path, line, field_name, problem


class CorpusFileErrors(CorpusFileError):
    """Several bad lines of one corpus file: the first one's fields, every one's message on its own line."""

    def __init__(self, errors: list[CorpusFileError]) -> None:
        first = errors[0]
        super().__init__(first.path, first.line, first.field_name, first.problem)
        self.errors = errors
        self.args = ("\n".join(str(error) for error in errors),)

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class CorpusLine:
    """One reply of a corpus file with the session it is read in."""

    path: Path
    line: int
    id: str
    template: str
    thinking: bool
    tools: ToolMode
    kwargs: tuple[tuple[str, Any], ...]
    reasoning_format: str
    messages: tuple[dict[str, Any], ...] | None = field(repr=False)
    tool_defs: tuple[dict[str, Any], ...] | None = field(repr=False)
    reply: str
    partial: bool
    truth: Message | None
    note: str
    exempt: tuple[str, ...] = ()
    meant_problems: tuple[str, ...] | None = None

    @property
    def origin(self) -> str:
        """The corpus name rows carry: file:NAME."""
        return f"file:{self.path.name}"

    @property
    def session_key(self) -> str:
        """What the lines of one session share."""
        return canonical_json([self.template, self.thinking, self.tools.value, list(self.kwargs),
                               self.reasoning_format, self.messages, self.tool_defs])

    def as_reply(self) -> Reply:
        """The line's reply, named by its id."""
        return Reply(self.reply, self.partial, self.origin, self.id, self.truth, self.note, self.exempt,
                     self.meant_problems)


def expect(value: Any, kind: type, where: tuple[Path, int, str], what: str) -> Any:
    """The value if it has the kind (a bool is not a number here), else a CorpusFileError saying what was expected."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise CorpusFileError(*where, f"expected {what}, got {json.dumps(value, ensure_ascii=False)[:80]}")
    return value


def read_truth(data: Any, where: tuple[Path, int, str]) -> Message:
    """A truth object: content, reasoning_content and tool_calls [{name, arguments, id}]."""
    expect(data, dict, where, "an object with content, reasoning_content, tool_calls")
    unknown = set(data) - {"content", "reasoning_content", "tool_calls"}
    if unknown:
        raise CorpusFileError(where[0], where[1], f"truth.{min(unknown)}", "unknown field")
    for key in ("content", "reasoning_content"):
        expect(data.get(key, ""), str, (where[0], where[1], f"truth.{key}"), "a string")
    calls = expect(data.get("tool_calls", []), list, (where[0], where[1], "truth.tool_calls"), "a list")
    read: list[ToolCall] = []
    for index, item in enumerate(calls):
        at = (where[0], where[1], f"truth.tool_calls[{index}]")
        expect(item, dict, at, "an object with name, arguments, id")
        name = expect(item.get("name"), str, (at[0], at[1], f"{at[2]}.name"), "a string")
        arguments = item.get("arguments", {})
        if isinstance(arguments, str):
            try:
                json.loads(arguments)
            except json.JSONDecodeError as error:
                raise CorpusFileError(at[0], at[1], f"{at[2]}.arguments", f"not JSON text: {error}") from None
        else:
            arguments = json.dumps(expect(arguments, dict, (at[0], at[1], f"{at[2]}.arguments"),
                                          "an object or JSON text"), ensure_ascii=False)
        call_id = expect(item.get("id", ""), str, (at[0], at[1], f"{at[2]}.id"), "a string")
        read.append(ToolCall(name, arguments, call_id))
    return Message(data.get("content", ""), data.get("reasoning_content", ""), tuple(read))


def read_names(data: Any, where: tuple[Path, int, str], names: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A list of names drawn from `names` (checks a reply breaks, problems it was written to show)."""
    listed = expect(data, list, where, f"a list of {what} ({', '.join(names)})")
    for index, name in enumerate(listed):
        if name not in names:
            expected = f"expected one of {', '.join(names)}, got {name!r}"
            raise CorpusFileError(where[0], where[1], f"{where[2]}[{index}]", expected)
    return tuple(listed)


def read_objects(data: Any, where: tuple[Path, int, str], what: str) -> tuple[dict[str, Any], ...]:
    """A list of JSON objects (messages or tool definitions)."""
    expect(data, list, where, f"a list of {what}")
    for index, item in enumerate(data):
        expect(item, dict, (where[0], where[1], f"{where[2]}[{index}]"), f"one of {what} as an object")
    return tuple(data)


def not_utf8(data: Any) -> bool:
    """Whether a parsed JSON value holds a string UTF-8 cannot encode (a lone surrogate such as \\ud800)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def deepest(text: str) -> tuple[int, str]:
    """How deep the values of a JSON line nest (the line's own object is level 0), and the field of the line
    that nests deepest; found without parsing the line, so a line nested past what a parser can follow is
    named too."""
    depth = most = 0
    field = deepest_field = ""
    for token in JSON_TOKEN.finditer(text):
        mark = token.group(0)
        if mark in "[{":
            depth += 1
            if depth - 1 > most:
                most, deepest_field = depth - 1, field
        elif mark in "]}":
            depth -= 1
        elif token.group(2) and depth == 1:
            field = token.group(1)
    return most, deepest_field


def read_line(path: Path, number: int, text: str) -> CorpusLine:
    """One corpus line, checked field by field."""
    depth, field_name = deepest(text)
    if depth > MAX_NESTING:
        raise CorpusFileError(path, number, field_name or "(line)",
                              f"nests {depth} levels deep; a corpus line's values may nest {MAX_NESTING}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CorpusFileError(path, number, "(line)", f"not JSON: {error}") from None
    if not isinstance(data, dict):
        raise CorpusFileError(path, number, "(line)", "expected a JSON object")
    for name, value in data.items():
        if not_utf8(value) or not_utf8(name):
            raise CorpusFileError(path, number, name, "holds a lone surrogate (\\ud800-\\udfff), not text")
    for name in REQUIRED:
        if name not in data:
            raise CorpusFileError(path, number, name, "missing")
    for name in data:
        if name not in REQUIRED + OPTIONAL:
            raise CorpusFileError(path, number, name, "unknown field")

    def at(name: str) -> tuple[Path, int, str]:
        return path, number, name

    line_id = expect(data["id"], str, at("id"), "a non-empty string")
    if not line_id:
        raise CorpusFileError(path, number, "id", "expected a non-empty string")
    tools = expect(data["tools"], str, at("tools"), "a tool mode")
    if tools not in {mode.value for mode in ToolMode}:
        raise CorpusFileError(path, number, "tools",
                              f"expected one of {', '.join(m.value for m in ToolMode)}, got {tools!r}")
    kwargs = expect(data["kwargs"], dict, at("kwargs"), "an object")
    reasoning_format = expect(data.get("reasoning_format", REASONING_FORMAT), str, at("reasoning_format"),
                              "a string")
    if reasoning_format not in REASONING_FORMATS:
        raise CorpusFileError(path, number, "reasoning_format",
                              f"expected one of {', '.join(REASONING_FORMATS)}, got {reasoning_format!r}")
    return CorpusLine(
        path=path, line=number, id=line_id,
        template=expect(data["template"], str, at("template"), "a template file name"),
        thinking=expect(data["thinking"], bool, at("thinking"), "true or false"),
        tools=ToolMode(tools), kwargs=tuple(sorted(kwargs.items())), reasoning_format=reasoning_format,
        messages=read_objects(data["messages"], at("messages"), "messages") if "messages" in data else None,
        tool_defs=read_objects(data["tool_defs"], at("tool_defs"), "tools") if "tool_defs" in data else None,
        reply=expect(data["reply"], str, at("reply"), "a string"),
        partial=expect(data["partial"], bool, at("partial"), "true or false"),
        truth=read_truth(data["truth"], at("truth")) if data.get("truth") is not None else None,
        note=expect(data.get("note", ""), str, at("note"), "a string"),
        exempt=read_names(data["exempt"], at("exempt"), STRUCTURAL_CHECKS, "structural checks")
        if "exempt" in data else (),
        meant_problems=read_names(data["meant_problems"], at("meant_problems"), PROBLEMS, "problems")
        if "meant_problems" in data else None,
    )


def decoded(path: Path, number: int, raw: bytes) -> str:
    """A line's bytes as UTF-8 text, or a CorpusFileError naming the first byte that is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorpusFileError(
            path, number, "(line)", f"not UTF-8 text: byte 0x{raw[error.start]:02x} at byte {error.start}"
        ) from None


def raw_lines(path: Path) -> list[bytes]:
    """The file's lines as bytes, or a CorpusFileError when it cannot be read."""
    try:
        return path.read_bytes().splitlines()
    except OSError as error:
        raise CorpusFileError(path, 0, "(file)", f"cannot be read: {error.strerror or error}") from None


def read_corpus(path: Path, templates: set[str]) -> list[CorpusLine]:
    """Every line of a corpus file, checked; blank lines are skipped, ids must be unique.

    Raises the CorpusFileError of the one bad line, or CorpusFileErrors naming every bad line.
    """
    lines: list[CorpusLine] = []
    errors: list[CorpusFileError] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(raw_lines(path), start=1):
        try:
            text = decoded(path, number, raw)
            if not text.strip():
                continue
            line = read_line(path, number, text)
            if line.template not in templates:
                raise CorpusFileError(path, number, "template", f"no upstream template named {line.template!r}")
            if line.id in seen:
                raise CorpusFileError(path, number, "id", f"{line.id!r} is already used on line {seen[line.id]}")
        except CorpusFileError as error:
            errors.append(error)
            continue
        seen[line.id] = number
        lines.append(line)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise CorpusFileErrors(errors)
    if not lines:
        raise CorpusFileError(path, 0, "(file)", "holds no reply")
    return lines


@dataclass(frozen=True)
class FilePlannedSession(PlannedSession):
    """A session planned from a corpus file, carrying the file's replies for it."""

    file_replies: tuple[Reply, ...] = field(default=(), repr=False)


def file_planned(entry: TemplateEntry, mode: Mode, conversation: str, history: tuple[dict[str, Any], ...],
                 tool_defs: tuple[dict[str, Any], ...], found: tuple[Reply, ...]) -> FilePlannedSession:
    """A corpus-file session rendered by jinja2 as planning renders its own (prompt None and the error kept)."""
    source = checked_source(entry, None)
    session = Session(template=entry.name, template_source=source, template_sha256=entry.sha256, bos=entry.bos,
                      eos=entry.eos, mode=mode, conversation=conversation, messages=history, tool_defs=tool_defs)
    try:
        prompt = render_chat(entry, source, history, session.tools, mode.thinking, session.kwargs, True)
        without = render_chat(entry, source, history, session.tools, mode.thinking, session.kwargs, False)
    except Exception as error:  # noqa: BLE001 - a template may raise anything; the error is kept
        return FilePlannedSession(session, entry, error_text(error), False, found)
    opened = opens_thought(generation_prompt(without, prompt), entry.think_start, entry.think_end)
    return FilePlannedSession(dataclasses.replace(session, prompt=prompt), entry, "", opened, found)


def file_sessions(path: Path, templates: str | None, family: str | None, mode: str | None
                  ) -> list[FilePlannedSession]:
    """The sessions of a corpus file (lines grouped by template, mode, messages and tools), filtered."""
    index = load_index()
    groups: dict[str, list[CorpusLine]] = {}
    for line in read_corpus(path, set(index)):
        groups.setdefault(line.session_key, []).append(line)
    out: list[FilePlannedSession] = []
    for lines in groups.values():
        first = lines[0]
        entry = index[first.template]
        session_mode = Mode(first.thinking, first.tools, first.kwargs, first.reasoning_format)
        if (templates and not fnmatch.fnmatch(first.template, templates)) or (family and entry.family != family) \
                or (mode and not fnmatch.fnmatch(session_mode.label, mode)):
            continue
        out.append(file_planned(
            entry, session_mode, first.origin,
            first.messages if first.messages is not None else messages(Conversation.SINGLE),
            first.tool_defs if first.tool_defs is not None else STANDARD_TOOLS,
            tuple(line.as_reply() for line in lines),
        ))
    return out
