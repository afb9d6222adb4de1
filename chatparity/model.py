"""The shared words of chatparity: readings, sessions, cases, outcomes, rows, the pinned clock and the parser
protocol. The bottom layer: it imports nothing of the project."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, cached_property
from typing import Any, Protocol, Union, get_args, get_origin, get_type_hints

PINNED_NOW = "2025-06-15T10:30:00Z"
REASONING_FORMAT = "deepseek"
REASONING_FORMATS = ("deepseek", "none", "deepseek-legacy", "auto")
"""The reasoning formats the pinned llama.cpp accepts, llama-server's default first."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces, the form every stable hash is taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def common_prefix_length(first: str, second: str) -> int:
    """How many code points two texts share at their start, found by halving the span still unequal (slices
    compare in C)."""
    same, differs = 0, min(len(first), len(second))
    if first[:differs] == second[:differs]:
        return differs
    while differs - same > 1:
        middle = (same + differs) // 2
        if first[same:middle] == second[same:middle]:
            same = middle
        else:
            differs = middle
    return same


def stable_hash(*parts: Any) -> str:
    """A short stable hex id of JSON-able parts."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()[:16]


# Readings


@dataclass(frozen=True)
class ToolCall:
    """One tool call: its name, its arguments as JSON text, and its id ("" when none)."""

    name: str
    arguments: str
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        """This call as a plain dict."""
        return {"name": self.name, "arguments": self.arguments, "id": self.id}


@dataclass(frozen=True)
class Message:
    """A parsed assistant message: reasoning, content and tool calls."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    problems: tuple[str, ...] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """This message as a plain dict (with its problems where the parser reports them)."""
        return {
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": [call.to_json() for call in self.tool_calls],
        } | problems_json(self.problems)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        """A message from the dict `to_json` writes (missing fields are empty)."""
        calls = tuple(
            ToolCall(
                name=call.get("name", ""),
                arguments=call.get("arguments", "") if isinstance(call.get("arguments", ""), str)
                else json.dumps(call.get("arguments"), ensure_ascii=False),
                id=call.get("id", "") or "",
            )
            for call in data.get("tool_calls") or []
        )
        return cls(
            content=data.get("content") or "",
            reasoning_content=data.get("reasoning_content") or "",
            tool_calls=calls,
            problems=problems_from_json(data),
        )

    @classmethod
    def of(cls, obj: Any, problems: bool = True) -> Message:
        """A message from any object with content, reasoning_content and tool_calls attributes (and its
        problems, unless `problems` is false), its fields set at once rather than one frozen setattr each (a
        stream converts one message per chunk)."""
        calls = getattr(obj, "tool_calls", None)
        made = object.__new__(cls)
        made.__dict__.update(
            content=getattr(obj, "content", "") or "",
            reasoning_content=getattr(obj, "reasoning_content", "") or "",
            tool_calls=tuple([ToolCall(call.name, call.arguments, getattr(call, "id", "") or "") for call in calls])
            if calls else (),
            problems=problems_of(obj) if problems else None,
        )
        return made


@dataclass(frozen=True)
class Rejection:
    """A parser's refusal of a reply (llama.cpp throws for a finished reply off its format), with the problems
    the parser reports (None: it reports none)."""

    reason: str
    problems: tuple[str, ...] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """This rejection as a plain dict."""
        return {"rejected": self.reason} | problems_json(self.problems)


def problems_of(obj: Any) -> tuple[str, ...] | None:
    """The problems a Python parser's message or rejection carries (enum members by value), None without a
    `problems` attribute."""
    found = getattr(obj, "problems", None)
    if found is None:
        return None
    return tuple(str(getattr(problem, "value", problem)) for problem in found)


def problems_json(problems: tuple[str, ...] | None) -> dict[str, Any]:
    """The `problems` field of a reading's dict, absent when the parser reports none."""
    return {} if problems is None else {"problems": list(problems)}


def problems_from_json(data: dict[str, Any]) -> tuple[str, ...] | None:
    """The problems of a reading's dict (None when it has no `problems` field)."""
    found = data.get("problems")
    return None if found is None else tuple(str(problem) for problem in found)


Reading = Message | Rejection


def reading_to_json(reading: Reading) -> dict[str, Any]:
    """A reading as a plain dict: a message's fields, or {"rejected": reason}."""
    return reading.to_json()


def reading_from_json(data: dict[str, Any]) -> Reading:
    """A reading from the dict `reading_to_json` writes."""
    if "rejected" in data:
        return Rejection(data["rejected"], problems_from_json(data))
    return Message.from_json(data)


def reading_json(reading: Reading | None) -> str | None:
    """A reading as the store keeps it (sorted-key JSON), or None."""
    return None if reading is None else json.dumps(reading_to_json(reading), ensure_ascii=False, sort_keys=True)


# Modes, sessions, replies and cases


class ToolMode(str, Enum):
    """How tools are offered: none, auto, required, parallel (auto + parallel calls), choice_none."""

    NONE = "none"
    AUTO = "auto"
    REQUIRED = "required"
    PARALLEL = "parallel"
    CHOICE_NONE = "choice_none"

    @property
    def offers_tools(self) -> bool:
        """Whether tools are sent with the request."""
        return self is not ToolMode.NONE

    @property
    def tool_choice(self) -> str:
        """The OpenAI tool_choice this mode sends."""
        return {ToolMode.REQUIRED: "required", ToolMode.CHOICE_NONE: "none"}.get(self, "auto")

    @property
    def parallel_tool_calls(self) -> bool:
        """Whether parallel tool calls are allowed."""
        return self is ToolMode.PARALLEL


@dataclass(frozen=True)
class Mode:
    """Thinking on/off × the template's own kwargs × a tool mode."""

    thinking: bool
    tools: ToolMode
    kwargs: tuple[tuple[str, Any], ...] = ()
    reasoning_format: str = REASONING_FORMAT

    @property
    def kwargs_dict(self) -> dict[str, Any]:
        """The chat_template_kwargs as a dict."""
        return dict(self.kwargs)

    @property
    def label(self) -> str:
        """A short readable name, e.g. `think/auto`, `nothink/none/reasoning_effort=high` or
        `think/auto/reasoning_format=none` (llama-server's default reasoning format is left out)."""
        parts = ["think" if self.thinking else "nothink", self.tools.value]
        parts += [f"{key}={canonical_json(value)}" for key, value in self.kwargs]
        if self.reasoning_format != REASONING_FORMAT:
            parts.append(f"reasoning_format={self.reasoning_format}")
        return "/".join(parts)


@dataclass(frozen=True)
class Session:
    """One template rendered under one mode and one conversation: the context every reply is read in."""

    template: str
    template_source: str = field(repr=False)
    template_sha256: str
    bos: str
    eos: str
    mode: Mode
    conversation: str
    messages: tuple[dict[str, Any], ...] = field(repr=False)
    tool_defs: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    prompt: str | None = field(default=None, repr=False, compare=False)
    now: str = PINNED_NOW

    @property
    def reasoning_format(self) -> str:
        """llama-server's reasoning_format for the request: the mode's."""
        return self.mode.reasoning_format

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI tools sent with the request ([] when the mode offers none)."""
        return list(self.tool_defs) if self.mode.tools.offers_tools else []

    @property
    def tool_choice(self) -> str:
        """The request's tool_choice."""
        return self.mode.tools.tool_choice

    @property
    def parallel_tool_calls(self) -> bool:
        """The request's parallel_tool_calls."""
        return self.mode.tools.parallel_tool_calls

    @property
    def enable_thinking(self) -> bool:
        """The request's enable_thinking."""
        return self.mode.thinking

    @property
    def chat_template_kwargs(self) -> dict[str, Any]:
        """The request's chat_template_kwargs: the template's own variables besides enable_thinking."""
        return self.mode.kwargs_dict

    @property
    def kwargs(self) -> dict[str, Any]:
        """The chat_template_kwargs under their older name, kept for parsers written against it."""
        return self.chat_template_kwargs

    @cached_property
    def id(self) -> str:
        """A stable hash of what the session is made of."""
        return stable_hash(
            self.template, self.template_sha256, self.mode.label, self.conversation, list(self.messages),
            self.tools, self.now, self.reasoning_format,
        )

    def render_request(self) -> dict[str, Any]:
        """The oracle `render` request fields for this session."""
        return {
            "template": self.template_source,
            "bos": self.bos,
            "eos": self.eos,
            "messages": list(self.messages),
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "enable_thinking": self.enable_thinking,
            "reasoning_format": self.reasoning_format,
            "chat_template_kwargs": self.kwargs,
            "add_generation_prompt": True,
            "now": self.now,
        }


@dataclass(frozen=True)
class Reply:
    """A model's reply: finished or partial, where it came from, the message it encodes if known, the
    structural checks it breaks on purpose (`exempt`, e.g. a call to a tool that was not offered) and the
    problems it was written to show (`meant_problems`, e.g. unknown_action for that call; None where they are
    not stated, as on a corpus file line without them)."""

    text: str
    partial: bool
    origin: str
    shape: str
    truth: Message | None = field(default=None, compare=False)
    note: str = field(default="", compare=False)
    exempt: tuple[str, ...] = field(default=(), compare=False)
    meant_problems: tuple[str, ...] | None = field(default=(), compare=False)


@dataclass(frozen=True)
class Case:
    """A session and one reply read under it, with a stable id."""

    session: Session
    reply: Reply

    @cached_property
    def id(self) -> str:
        """A stable hash of the template, mode, conversation, reply and partial flag."""
        return stable_hash(self.session.id, self.reply.text, self.reply.partial)


# Profiles


class Profile(str, Enum):
    """How much a sweep runs: `quick` (every template, fewer modes, replies and chunkings), `full`, or `server`
    (quick's sessions and replies at the chunkings a server's token stream can be judged at)."""

    QUICK = "quick"
    FULL = "full"
    SERVER = "server"


def profile_named(name: str) -> Profile:
    """The profile called `name`, or a ValueError listing the profiles."""
    try:
        return Profile(name)
    except ValueError:
        raise ValueError(f"unknown profile {name!r}: use one of {', '.join(p.value for p in Profile)}") from None


# Outcomes


class Outcome(str, Enum):
    """What became of one row: agreement, disagreement, or a side that could not answer."""

    MATCH = "match"
    MISMATCH = "mismatch"
    ORACLE_CRASHED = "oracle_crashed"
    ORACLE_TIMEOUT = "oracle_timeout"
    PARSER_CRASHED = "parser_crashed"
    PARSER_TIMEOUT = "parser_timeout"
    UNSUPPORTED = "unsupported"
    NOT_WRITTEN = "not_written"


ORACLE_FAILURES = (Outcome.ORACLE_CRASHED, Outcome.ORACLE_TIMEOUT)
PARSER_FAILURES = (Outcome.PARSER_CRASHED, Outcome.PARSER_TIMEOUT)


class Kind(str, Enum):
    """How two readings differ: a field, or one side rejecting what the other reads."""

    CONTENT = "content"
    REASONING = "reasoning"
    CALLS = "calls"
    REJECTS = "rejects"
    ACCEPTS = "accepts"
    WHITESPACE = "whitespace"


class SessionStatus(str, Enum):
    """Whether a session produced rows, and why not."""

    OK = "ok"
    UNSUPPORTED = "unsupported"
    ORACLE_ERROR = "oracle_error"
    JINJA2_ERROR = "jinja2_error"
    RENDER_FAILED = "render_failed"


STREAM_CHECKS = ("consistent", "monotonic", "clean", "snapshot_parity")
STRUCTURAL_CHECKS = ("arguments_json", "arguments_schema", "no_leakage", "parallel_order", "problems_agree")
PROBLEMS = (
    "no_action",
    "multiple_actions",
    "prose_before_action",
    "text_after_action",
    "unclosed_think",
    "bad_syntax",
    "unknown_action",
    "bad_args",
    "cut_off",
)


# Records of a run: one per session, one per row (case × chunking)


@dataclass(frozen=True)
class SessionRecord:
    """A session's line in the `sessions` table."""

    session_id: str
    template: str
    family: str
    syntax: str
    mode: str
    thinking: int
    tools: str
    kwargs: str
    conversation: str
    jinja_renders: int
    oracle_renders: int
    prompt_parity: str
    oracle_format: str
    status: str
    error: str

    KEY = ("session_id",)


@dataclass(frozen=True)
class Row:
    """A row: one case read at one chunking by the oracle and the parser, and its outcome."""

    case_id: str
    chunking: str
    session_id: str
    template: str
    family: str
    syntax: str
    mode: str
    tools: str
    conversation: str
    origin: str
    shape: str
    partial: int
    outcome: str
    kind: str = ""
    detail: str = ""
    consistent: int | None = None
    monotonic: int | None = None
    clean: int | None = None
    snapshot_parity: int | None = None
    stream_detail: str = ""
    clean_breaks: int | None = None
    parity_breaks: int | None = None
    parity_explained: str = ""
    explained: str = ""
    arguments_json: int | None = None
    arguments_schema: int | None = None
    no_leakage: int | None = None
    parallel_order: int | None = None
    problems_agree: int | None = None
    structure_detail: str = ""
    oracle_arguments_json: int | None = None
    oracle_arguments_schema: int | None = None
    oracle_no_leakage: int | None = None
    oracle_parallel_order: int | None = None
    oracle_problems_agree: int | None = None
    oracle_structure_detail: str = ""
    oracle_stream: str = ""
    oracle_grammar: str = ""
    oracle_vs_truth: str | None = None
    parser_vs_truth: str | None = None
    reply: str = ""
    truth: str | None = None
    oracle_reading: str | None = None
    parser_reading: str | None = None
    error: str = ""

    KEY = ("case_id", "chunking")


Record = SessionRecord | Row


def columns(record_type: type[Record]) -> tuple[str, ...]:
    """The store columns of a record type, in table order."""
    return tuple(item.name for item in dataclasses.fields(record_type))


def sql_columns(record_type: type[Record]) -> tuple[tuple[str, str], ...]:
    """Each column with its SQLite type: TEXT or INTEGER, NOT NULL unless the field may be None."""
    hints = get_type_hints(record_type)
    typed = []
    for name in columns(record_type):
        hint = hints[name]
        args = get_args(hint) if get_origin(hint) in (Union, types.UnionType) else (hint,)
        base = next(arg for arg in args if arg is not type(None))
        sql = "INTEGER" if base is int else "TEXT"
        typed.append((name, sql if type(None) in args else f"{sql} NOT NULL"))
    return tuple(typed)


def record_values(record: Record) -> tuple[Any, ...]:
    """A record's values in column order."""
    return tuple(getattr(record, name) for name in columns(type(record)))


@cache
def column_defaults(record_type: type[Record]) -> tuple[frozenset[str], frozenset[str], dict[str, Any]]:
    """A record type's column names, the ones without a default, and the defaults of the others."""
    fields = dataclasses.fields(record_type)
    defaults = {item.name: item.default for item in fields if item.default is not dataclasses.MISSING}
    names = frozenset(item.name for item in fields)
    return names, names - defaults.keys(), defaults


def record_from(record_type: type[Record], data: Mapping[str, Any]) -> Any:
    """A record from a mapping holding its columns (the defaults fill the others; an unknown or a missing column
    is an error), its fields set at once (the frozen dataclass's own __init__ sets each through
    object.__setattr__, several times slower for a row's many columns; a sweep makes a row per case and
    chunking)."""
    names, required, defaults = column_defaults(record_type)  # type: ignore[arg-type]
    if not data.keys() <= names:
        unknown = sorted(data.keys() - names)
        raise ValueError(f"{record_type.__name__}: unknown columns {', '.join(unknown)}")
    if not required <= data.keys():
        missing = sorted(required - data.keys())
        raise ValueError(f"{record_type.__name__}: missing columns {', '.join(missing)}")
    record = object.__new__(record_type)
    record.__dict__.update(defaults)
    record.__dict__.update(data)
    return record


# Errors of input


class InputError(Exception):
    """Input the user got wrong (a flag, a file, a pin): printed as one line, never a traceback."""


# The parser protocol and its errors


class Rejected(Exception):
    """A parser refuses a reply (any exception class named Rejected counts)."""


class Unsupported(Exception):
    """A parser declines a session at open (any exception class named Unsupported counts)."""


def named(error: BaseException, name: str) -> bool:
    """Whether the exception's class, or one of its bases, is called `name`."""
    return any(klass.__name__ == name for klass in type(error).__mro__)


class ParserUnsupported(Exception):
    """The parser declined the session at open."""


class ParserRenderFailed(ParserUnsupported):
    """The parser reads the template but cannot render the session (its jinja2, or llama.cpp for the oracle);
    any exception class named RenderFailed counts."""


class ParserCrashed(Exception):
    """The parser raised something that is not a rejection, or its process died."""


class ParserTimeout(Exception):
    """The parser did not answer one call in time."""


class NotWritten(Exception):
    """A parser that reads what a server wrote (llama-server) found the server wrote something else than the
    reply: the row is not a reading of the reply, only its cause is kept."""

    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause = cause


@dataclass(frozen=True)
class StreamRead:
    """The snapshots after each chunk of one stream (which may be read again, each snapshot made whole as it
    is read), and the final reading."""

    snapshots: Iterable[Reading]
    final: Reading


class SessionReader(Protocol):
    """A parser opened on one session, as the harness drives it."""

    def parse(self, text: str, partial: bool) -> Reading:
        """The whole read of `text` (a Rejection when the parser refuses it)."""

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """Feed the chunks; the final reading is `finish()` when `finish`, else the last snapshot."""

    def close(self) -> None:
        """The harness reads nothing more with this reader; it never raises."""


class ParserUnderTest(Protocol):
    """A parser as the harness drives it: named, revisioned, opened per session."""

    @property
    def name(self) -> str:
        """The parser's identity in the run's stamp, the same wherever it is installed."""

    def revision(self) -> str:
        """The parser's revision for the run's stamp."""

    def open(self, session: Session) -> SessionReader:
        """A reader for the session; raises ParserUnsupported, ParserCrashed or ParserTimeout."""

    def close(self) -> None:
        """Release processes the parser holds."""
