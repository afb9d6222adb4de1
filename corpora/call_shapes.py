"""Tool-call shapes: a template's own call text, composed with prose and corrupted in the ways models do."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from chatparity.model import Message, Reply, ToolMode
from corpora.conversations import CALL_IDS, call
from corpora.partials import CLOSING_TAG
from corpora.roundtrip import truth_of
from corpora.skips import Skip
from corpora.thinking_shapes import CONTENT

ORIGIN = "toolcall"
PROSE = "Let me check the weather for you."
AFTER = "\nI will report back once I have it."
THOUGHT_PREFIX = "I need the forecast first.\n"
FOREIGN_THINK_START, FOREIGN_THINK_END = "<think>", "</think>"
UNKNOWN_TOOL = "launch_rocket"
PROBE_CALL_ID = "call00001"
"""The call id llama.cpp's template analysis renders its probe calls with (and some templates' readers keep)."""
EXTRA_PARAMETER = ("units", "metric")
DECOMPOSED = "Checking the cafe\u0301 forecast in Sa\u0303o Paulo."
COMMENTARY = "<|channel|>commentary"
JSON_NUMBER = re.compile(r"(:\s*)4(\s*[,}])")
ANALYSIS = "<|channel|>analysis"
CJK_CITY = '東京 "渋谷" \\ {a: [1]}\n\tcafé ☀'
RAW_BREAK_CITY = "Rio,\r\n\tLima"
BACKSLASH_CITY = "Rio\\Lima"
JSON_NAME_FIELD = re.compile(r'\{(\s*)"name"(\s*):')
OPENAI_TYPE_FIELD = '"type": "function", '
BARE_INTEGER = re.compile(r"(?<=[>=])(\s*)4(?=\s*[<,)])")
CALLING_MODES = (ToolMode.AUTO, ToolMode.REQUIRED, ToolMode.PARALLEL)
TAG_PATTERN = re.compile(r"<[^<>\s]{1,40}>|\[[A-Z_]{3,}\]|<[A-Za-z_:]{2,30}(?=[\s=])")
SPACE_BEFORE_CLOSING = " \n"
CALL_ID_FIELD = re.compile(r'("(?:tool_call_)?id"\s*:\s*)"[^"]*"')
NUMERIC_ID = "123456789"
KEY_COLON = re.compile(r'("|(?<=[{,])[A-Za-z_]\w*):(?=[^\s/])')


class CallShape(str, Enum):
    """The tool-call shapes."""

    PROSE_BEFORE = "prose_before_call"
    TEXT_AFTER = "text_after_call"
    UNKNOWN_NAME = "unknown_tool_name"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    CALL_IN_THOUGHT = "call_inside_thought"
    NO_OPENING_WRAPPER = "call_without_opening_wrapper"
    TWO_CALLS_ONE_UNKNOWN = "two_calls_one_unknown"
    EMPTY_ARGUMENTS = "empty_arguments"
    CJK_ESCAPES = "cjk_and_escapes_in_arguments"
    INTEGER_AS_TEXT = "integer_written_as_text"
    BOOLEAN_AS_TEXT = "boolean_written_as_text"
    OBJECT_AS_TEXT = "object_written_as_text"
    MARKER_QUOTED = "marker_quoted_then_call"
    JSON_FORMS = "escaped_slash_and_exponent_in_arguments"
    CALL_IN_ANALYSIS = "call_in_analysis_channel"
    DECOMPOSED_PROSE = "decomposed_unicode_prose_then_call"
    UNWRAPPED_VALUES = "argument_values_not_wrapped_in_newlines"
    EXTRA_PARAMETER = "parameter_not_in_schema"
    RAW_LINE_BREAK = "raw_line_break_in_json_string"
    OPTIONAL_FIRST = "optional_parameter_first"
    OPENAI_TYPE_FIELD = "openai_type_field_in_call"
    PYTHON_QUOTED_VALUE = "python_quoted_argument_value"
    SAME_CALL_TWICE = "same_call_twice"
    UNESCAPED_BACKSLASH = "unescaped_backslash_in_json_string"
    EMPTY_CALL_ID = "empty_call_id"
    SPACED_KEYS = "space_after_argument_keys"
    POINT_WITHOUT_DIGITS = "number_without_fraction_digits"
    PROBE_ID = "call_id_of_the_analysis_probe"
    CALL_AFTER_UNCLOSED_THOUGHT = "call_after_unclosed_thought"
    FOREIGN_THINK_TAGS = "thought_in_tags_the_template_lacks"
    MISSING_LAST_BRACE = "call_missing_its_last_brace"
    NUMERIC_CALL_ID = "call_id_written_as_a_number"
    SPACED_CLOSING = "whitespace_before_closing_tag"


QUICK_SHAPES = (
    CallShape.PROSE_BEFORE,
    CallShape.TEXT_AFTER,
    CallShape.UNKNOWN_NAME,
    CallShape.MALFORMED_ARGUMENTS,
    CallShape.NO_OPENING_WRAPPER,
    CallShape.MARKER_QUOTED,
    CallShape.JSON_FORMS,
    CallShape.CALL_IN_ANALYSIS,
    CallShape.DECOMPOSED_PROSE,
    CallShape.OBJECT_AS_TEXT,
    CallShape.UNWRAPPED_VALUES,
    CallShape.EXTRA_PARAMETER,
    CallShape.RAW_LINE_BREAK,
    CallShape.OPENAI_TYPE_FIELD,
    CallShape.PYTHON_QUOTED_VALUE,
    CallShape.SAME_CALL_TWICE,
    CallShape.UNESCAPED_BACKSLASH,
    CallShape.EMPTY_CALL_ID,
    CallShape.SPACED_KEYS,
    CallShape.POINT_WITHOUT_DIGITS,
    CallShape.PROBE_ID,
    CallShape.CALL_AFTER_UNCLOSED_THOUGHT,
    CallShape.FOREIGN_THINK_TAGS,
    CallShape.MISSING_LAST_BRACE,
    CallShape.NUMERIC_CALL_ID,
    CallShape.SPACED_CLOSING,
)


class Turn(str, Enum):
    """The assistant turns whose written text the shapes are made from."""

    CONTENT = "content"
    ONE_CALL = "one_call"
    PROSE_CALL = "prose_call"
    QUOTED_CALL = "quoted_marker_call"
    TWO_CALLS_ONE_UNKNOWN = "two_calls_one_unknown"
    EMPTY_ARGUMENTS = "empty_arguments"
    CJK_ARGUMENTS = "cjk_arguments"
    INTEGER_AS_TEXT = "integer_as_text"
    BOOLEAN_AS_TEXT = "boolean_as_text"
    OBJECT_AS_TEXT = "object_as_text"
    TAGS_IN_ARGUMENT = "tags_in_argument"
    EXTRA_PARAMETER = "extra_parameter"
    OPTIONAL_FIRST = "optional_parameter_first"


NATIVE_SHAPES = {
    CallShape.PROSE_BEFORE: Turn.PROSE_CALL,
    CallShape.TWO_CALLS_ONE_UNKNOWN: Turn.TWO_CALLS_ONE_UNKNOWN,
    CallShape.EMPTY_ARGUMENTS: Turn.EMPTY_ARGUMENTS,
    CallShape.CJK_ESCAPES: Turn.CJK_ARGUMENTS,
    CallShape.INTEGER_AS_TEXT: Turn.INTEGER_AS_TEXT,
    CallShape.BOOLEAN_AS_TEXT: Turn.BOOLEAN_AS_TEXT,
    CallShape.OBJECT_AS_TEXT: Turn.OBJECT_AS_TEXT,
    CallShape.MARKER_QUOTED: Turn.QUOTED_CALL,
    CallShape.EXTRA_PARAMETER: Turn.EXTRA_PARAMETER,
    CallShape.OPTIONAL_FIRST: Turn.OPTIONAL_FIRST,
}
COMPOSABLE_SHAPES = (CallShape.PROSE_BEFORE, CallShape.MARKER_QUOTED, CallShape.TWO_CALLS_ONE_UNKNOWN)
TRUTH_SHAPES = {
    CallShape.EMPTY_ARGUMENTS: CALLING_MODES,
    CallShape.CJK_ESCAPES: CALLING_MODES,
    CallShape.EXTRA_PARAMETER: CALLING_MODES,
}
COMPOSED_TRUTH_SHAPES = (CallShape.TEXT_AFTER, CallShape.UNWRAPPED_VALUES, CallShape.SPACED_CLOSING)
EXEMPT_CHECKS = {
    CallShape.UNKNOWN_NAME: ("arguments_schema",),
    CallShape.TWO_CALLS_ONE_UNKNOWN: ("arguments_schema",),
    CallShape.MALFORMED_ARGUMENTS: ("arguments_json", "arguments_schema", "no_leakage"),
    CallShape.POINT_WITHOUT_DIGITS: ("arguments_json", "arguments_schema", "no_leakage"),
    CallShape.INTEGER_AS_TEXT: ("arguments_schema",),
    CallShape.BOOLEAN_AS_TEXT: ("arguments_schema",),
    CallShape.OBJECT_AS_TEXT: ("arguments_schema",),
    CallShape.JSON_FORMS: ("arguments_schema",),
    CallShape.EXTRA_PARAMETER: ("arguments_schema",),
    CallShape.PYTHON_QUOTED_VALUE: ("arguments_schema",),
    CallShape.NO_OPENING_WRAPPER: ("no_leakage",),
    CallShape.CALL_IN_THOUGHT: ("no_leakage",),
    CallShape.CALL_AFTER_UNCLOSED_THOUGHT: ("no_leakage",),
    CallShape.FOREIGN_THINK_TAGS: ("no_leakage",),
    CallShape.MISSING_LAST_BRACE: ("arguments_json", "arguments_schema", "no_leakage"),
}
MEANT_PROBLEMS = {
    CallShape.UNKNOWN_NAME: ("unknown_action",),
    CallShape.MALFORMED_ARGUMENTS: ("bad_args",),
}


@dataclass(frozen=True)
class ToolSet:
    """The tools of a session the shapes call, found by their parameter types."""

    weather: str
    city: str
    days: str
    empty: str | None
    nested: tuple[str, str] | None
    boolean: tuple[str, str] | None
    code: tuple[str, str] | None
    defs: tuple[dict[str, Any], ...]


def properties(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition's top-level parameter schemas."""
    return dict(tool.get("function", tool).get("parameters", {}).get("properties", {}))


def tool_name(tool: dict[str, Any]) -> str:
    """A tool definition's function name."""
    return str(tool.get("function", tool)["name"])


def first_param(tool: dict[str, Any], kind: str, hint: str = "") -> str | None:
    """The first parameter of a JSON type (preferring one whose name holds the hint)."""
    names = [name for name, schema in properties(tool).items() if schema.get("type") == kind]
    hinted = [name for name in names if hint and hint in name]
    return next(iter(hinted or names), None)


def tool_set(defs: tuple[dict[str, Any], ...]) -> ToolSet | str:
    """The tools the shapes call, or why the set lacks the string-and-integer tool they need."""
    weather = next((t for t in defs if first_param(t, "string") and first_param(t, "integer")), None)
    if weather is None:
        return "no tool takes both a string and an integer parameter"

    def find(kind: str, hint: str = "") -> tuple[str, str] | None:
        hinted = [t for t in defs if hint and hint in str(first_param(t, kind, hint))]
        tool = next(iter(hinted or [t for t in defs if first_param(t, kind)]), None)
        return None if tool is None else (tool_name(tool), str(first_param(tool, kind, hint)))

    return ToolSet(
        weather=tool_name(weather), city=str(first_param(weather, "string")),
        days=str(first_param(weather, "integer")),
        empty=next((tool_name(t) for t in defs if not properties(t)), None),
        nested=find("object"), boolean=find("boolean"), code=find("string", "code"), defs=defs,
    )


def sample_value(schema: dict[str, Any]) -> Any:
    """A plain value of a parameter schema's type."""
    kind = schema.get("type")
    if kind == "object":
        return {name: sample_value(sub) for name, sub in schema.get("properties", {}).items()}
    return {"integer": 4, "number": 2.5, "boolean": True, "array": ["ana", "rui"]}.get(str(kind), "Rio")


def arguments_for(tools: ToolSet, name: str, **given: Any) -> dict[str, Any]:
    """Arguments for every parameter of a tool: the given values, sample values for the rest."""
    tool = next(t for t in tools.defs if tool_name(t) == name)
    return {param: given.get(param, sample_value(schema)) for param, schema in properties(tool).items()}


def weather_arguments(tools: ToolSet, city: str = "Rio", days: Any = 4) -> dict[str, Any]:
    """The arguments of the plain weather call."""
    return {tools.city: city, tools.days: days}


def optional_first(tools: ToolSet) -> dict[str, Any] | None:
    """The weather call's arguments with its optional parameters written before its required ones (None when
    the weather tool has no optional parameter to put first)."""
    tool = next(t for t in tools.defs if tool_name(t) == tools.weather)
    required = set(tool.get("function", tool).get("parameters", {}).get("required", []))
    arguments = weather_arguments(tools)
    optional = {name: value for name, value in arguments.items() if name not in required}
    if not optional or len(optional) == len(arguments):
        return None
    return {**optional, **{name: value for name, value in arguments.items() if name in required}}


def turn_message(turn: Turn, tools: ToolSet, quoted: str, tag_code: str) -> dict[str, Any] | None:
    """The assistant message of a turn, or None where the tool set has no tool for it."""
    weather = call(tools.weather, weather_arguments(tools))
    calls: list[dict[str, Any]] | None = None
    content = ""
    if turn is Turn.CONTENT:
        return {"role": "assistant", "content": CONTENT}
    if turn in (Turn.ONE_CALL, Turn.PROSE_CALL, Turn.QUOTED_CALL):
        calls = [weather]
        content = {Turn.PROSE_CALL: PROSE, Turn.QUOTED_CALL: quoted}.get(turn, "")
    elif turn is Turn.TWO_CALLS_ONE_UNKNOWN:
        calls = [weather, call(UNKNOWN_TOOL, {"target": "moon"}, 1)]
    elif turn is Turn.EMPTY_ARGUMENTS and tools.empty:
        calls = [call(tools.empty, {})]
    elif turn is Turn.CJK_ARGUMENTS:
        calls = [call(tools.weather, weather_arguments(tools, CJK_CITY))]
    elif turn is Turn.EXTRA_PARAMETER:
        calls = [call(tools.weather, {**weather_arguments(tools), EXTRA_PARAMETER[0]: EXTRA_PARAMETER[1]})]
    elif turn is Turn.OPTIONAL_FIRST:
        ordered = optional_first(tools)
        calls = [call(tools.weather, ordered)] if ordered else None
    elif turn is Turn.INTEGER_AS_TEXT:
        calls = [call(tools.weather, weather_arguments(tools, days="4"))]
    elif turn is Turn.BOOLEAN_AS_TEXT and tools.boolean:
        name, param = tools.boolean
        calls = [call(name, arguments_for(tools, name, **{param: "true"}))]
    elif turn is Turn.OBJECT_AS_TEXT and tools.nested:
        name, param = tools.nested
        value = json.dumps(arguments_for(tools, name)[param], ensure_ascii=False)
        calls = [call(name, arguments_for(tools, name, **{param: value}))]
    elif turn is Turn.TAGS_IN_ARGUMENT and tools.code:
        name, param = tools.code
        calls = [call(name, arguments_for(tools, name, **{param: tag_code}))]
    if calls is None:
        return None
    return {"role": "assistant", "content": content, "tool_calls": calls}


@dataclass(frozen=True)
class Written:
    """What a template writes for one assistant turn as a reply (text None with the reason when it can't)."""

    message: dict[str, Any]
    text: str | None
    reason: str = ""
    hand: bool = False


@dataclass(frozen=True)
class CallText:
    """The plain one-call reply split into what precedes the call and the call itself."""

    head: str
    body: str
    name: str
    opening: str


def opening_marker(prefix: str, markers: tuple[str, ...]) -> str:
    """The earliest marker (or tag-like token) in the text before a call's name."""
    found = [(prefix.find(m), -len(m), m) for m in markers if m and m in prefix]
    found += [(match.start(), -len(match.group()), match.group()) for match in TAG_PATTERN.finditer(prefix)]
    return min(found)[2] if found else ""


def split_call(text: str, name: str, think_end: str, markers: tuple[str, ...]) -> CallText | str:
    """Split a written one-call reply at the call's opening, or say why it can't be."""
    at = text.find(name)
    if at < 0:
        return f"the written call does not hold the tool name {name!r}"
    head_end = 0
    if think_end and think_end in text[:at]:
        head_end = text.rindex(think_end, 0, at) + len(think_end)
        head_end += len(text[head_end:at]) - len(text[head_end:at].lstrip())
    think_tags = {think_end}
    opening = opening_marker(text[head_end:at], tuple(m for m in markers if m not in think_tags))
    return CallText(text[:head_end], text[head_end:], name, opening)


def unwrap_values(body: str, values: tuple[str, ...]) -> str | None:
    """The call with the newlines the template wraps around each argument value removed, or None when it
    wraps none."""
    unwrapped = body
    for value in values:
        unwrapped = unwrapped.replace(f">\n{value}\n<", f">{value}<")
    return None if unwrapped == body else unwrapped


def break_arguments(body: str, value: str, markers: tuple[str, ...]) -> str | None:
    """The call with the closing after its first argument value removed, or None when none is found."""
    at = body.find(value)
    if at < 0:
        return None
    end = at + len(value)
    if body[end:end + 1] == '"':
        return body[:end] + body[end + 1:]
    closers = [(body.find(m, end), m) for m in markers if m and body.find(m, end) >= 0]
    closers += [(match.start(), match.group()) for match in CLOSING_TAG.finditer(body, end)]
    if not closers:
        return None
    where, closer = min(closers)
    return body[:where] + body[where + len(closer):]


@dataclass(frozen=True)
class CallFrame:
    """What the call shapes of one session are built from."""

    tools: ToolSet
    mode: ToolMode
    written: dict[Turn, Written]
    markers: tuple[str, ...]
    think_start: str = ""
    think_end: str = ""
    opened: bool = False


def json_forms(body: str) -> str:
    """A written call with its string Rio as `"Rio\\/Niter\\u00f3i"` in JSON's quotes or
    `'Rio\\/L\\'Aquila\\u00e9'` in Python's (an escaped slash, quote and code point), and its integer 4, JSON or
    bare, as `-0.45e+1`."""
    slashed = body.replace('"Rio"', '"Rio\\/Niter\\u00f3i"', 1)
    if slashed == body:
        slashed = body.replace("'Rio'", "'Rio\\/L\\'Aquila\\u00e9'", 1)
    exponent = JSON_NUMBER.sub(r"\g<1>-0.45e+1\g<2>", slashed, count=1)
    return exponent if exponent != slashed else BARE_INTEGER.sub(r"\g<1>-0.45e+1", slashed, count=1)


def composed(frame: CallFrame, shape: CallShape, split: CallText) -> str | Skip:
    """A shape made by composing or corrupting the plain one-call text."""
    head, body = split.head, split.body
    if shape is CallShape.TEXT_AFTER:
        return head + body + AFTER
    if shape is CallShape.UNKNOWN_NAME:
        return head + body.replace(split.name, UNKNOWN_TOOL)
    if shape is CallShape.MALFORMED_ARGUMENTS:
        broken = break_arguments(body, "Rio", frame.markers)
        return Skip(ORIGIN, shape.value, "no closing found after the argument value") if broken is None \
            else head + broken
    if shape is CallShape.TWO_CALLS_ONE_UNKNOWN:
        return head + body + body.replace(split.name, UNKNOWN_TOOL)
    if shape is CallShape.SAME_CALL_TWICE:
        return head + body + body
    if shape is CallShape.JSON_FORMS:
        formed = json_forms(body)
        if formed == body:
            return Skip(ORIGIN, shape.value,
                        "the written call has neither a JSON string nor a bare integer argument")
        return head + formed
    if shape is CallShape.PROBE_ID:
        if CALL_IDS[0] not in body:
            return Skip(ORIGIN, shape.value, "the written call carries no call id")
        return head + body.replace(CALL_IDS[0], PROBE_CALL_ID, 1)
    if shape is CallShape.POINT_WITHOUT_DIGITS:
        pointed = JSON_NUMBER.sub(r"\g<1>4.\g<2>", body, count=1)
        if pointed == body:
            pointed = BARE_INTEGER.sub(r"\g<1>4.", body, count=1)
        if pointed == body:
            return Skip(ORIGIN, shape.value, "the written call has no integer argument, JSON or bare")
        return head + pointed
    if shape in (CallShape.RAW_LINE_BREAK, CallShape.UNESCAPED_BACKSLASH):
        if '"Rio"' not in body:
            return Skip(ORIGIN, shape.value, "the written call has no JSON string argument")
        city = RAW_BREAK_CITY if shape is CallShape.RAW_LINE_BREAK else BACKSLASH_CITY
        return head + body.replace('"Rio"', f'"{city}"', 1)
    if shape is CallShape.SPACED_KEYS:
        opening = body.find("{")
        spaced = body if opening < 0 else body[:opening] + KEY_COLON.sub(r"\1: ", body[opening:])
        if spaced == body:
            return Skip(ORIGIN, shape.value, "the written call has no key written right before its value")
        return head + spaced
    if shape in (CallShape.EMPTY_CALL_ID, CallShape.NUMERIC_CALL_ID):
        if not CALL_ID_FIELD.search(body):
            return Skip(ORIGIN, shape.value, "the written call has no JSON id field")
        written = '""' if shape is CallShape.EMPTY_CALL_ID else NUMERIC_ID
        return head + CALL_ID_FIELD.sub(r"\g<1>" + written, body, count=1)
    if shape is CallShape.OPENAI_TYPE_FIELD:
        field = JSON_NAME_FIELD.search(body)
        if field is None or '"type"' in body:
            return Skip(ORIGIN, shape.value, "the written call is no JSON object with a name field")
        return head + body[:field.start()] + "{" + field.group(1) + OPENAI_TYPE_FIELD + body[field.start() + 1:]
    if shape is CallShape.PYTHON_QUOTED_VALUE:
        value = BARE_INTEGER.search(body)
        if value is None:
            return Skip(ORIGIN, shape.value, "the written call has no integer value outside JSON")
        return head + body[:value.end() - 1] + "'4'" + body[value.end():]
    if shape is CallShape.CALL_IN_ANALYSIS:
        if COMMENTARY not in body:
            return Skip(ORIGIN, shape.value, "the template writes no commentary channel")
        return head + body.replace(COMMENTARY, ANALYSIS, 1)
    if shape is CallShape.UNWRAPPED_VALUES:
        unwrapped = unwrap_values(body, ("Rio", "4"))
        return Skip(ORIGIN, shape.value, "the template does not wrap argument values in newlines") \
            if unwrapped is None else head + unwrapped
    if shape is CallShape.DECOMPOSED_PROSE:
        return f"{head}{DECOMPOSED}\n{body}"
    if shape in COMPOSABLE_SHAPES:
        failed = frame.written.get(NATIVE_SHAPES[shape])
        prose = (failed.message.get("content") if failed else "") or PROSE
        return f"{head}{prose}\n{body}"
    if shape is CallShape.CALL_IN_THOUGHT:
        if not (frame.think_start and frame.think_end):
            return Skip(ORIGIN, shape.value, "the template has no thinking tags")
        lead = "" if frame.opened else frame.think_start
        return f"{lead}{THOUGHT_PREFIX}{body}{frame.think_end}"
    if shape is CallShape.CALL_AFTER_UNCLOSED_THOUGHT:
        if not (frame.think_start and frame.think_end):
            return Skip(ORIGIN, shape.value, "the template has no thinking tags")
        return f"{'' if frame.opened else frame.think_start}{THOUGHT_PREFIX}{body}"
    if shape is CallShape.FOREIGN_THINK_TAGS:
        if frame.think_start:
            return Skip(ORIGIN, shape.value, "the template has thinking tags of its own")
        return f"{FOREIGN_THINK_START}\n{THOUGHT_PREFIX}{FOREIGN_THINK_END}\n\n{head}{body}"
    if shape is CallShape.SPACED_CLOSING:
        tags = list(CLOSING_TAG.finditer(body))
        if not tags:
            return Skip(ORIGIN, shape.value, "the written call has no closing tag")
        return head + body[:tags[-1].start()] + SPACE_BEFORE_CLOSING + body[tags[-1].start():]
    if shape is CallShape.MISSING_LAST_BRACE:
        last = body.rfind("}")
        if last < 0:
            return Skip(ORIGIN, shape.value, "the written call has no closing brace")
        return head + body[:last] + body[last + 1:]
    if not split.opening:
        return Skip(ORIGIN, shape.value, "the written call has no opening marker")
    return head + body.replace(split.opening, "", 1)


def truth_for(frame: CallFrame, shape: CallShape, written: Written) -> Message | None:
    """The truth of a natively written shape where it is certain."""
    if written.hand or frame.mode not in TRUTH_SHAPES.get(shape, ()):
        return None
    return truth_of(written.message, written.text or "")


def composed_truth(frame: CallFrame, shape: CallShape, one: Written) -> Message | None:
    """The truth of a composed shape whose meaning is certain: a call followed by text means that call, with
    the text as content (so a reader that drops the call or the text shows against the truth); a call whose
    values lack the template's wrapping newlines, or whose closing tag follows whitespace, means the same call."""
    if shape not in COMPOSED_TRUTH_SHAPES or one.hand or frame.mode not in CALLING_MODES:
        return None
    meant = truth_of(one.message, one.text or "")
    if shape is not CallShape.TEXT_AFTER:
        return meant
    return replace(meant, content=(meant.content + AFTER).strip())


def exempt_checks(shape: CallShape, truth: Message | None) -> tuple[str, ...]:
    """The structural checks a shape breaks on purpose: a schema it violates, markers it writes out of place
    (a quoted marker counts only where no truth says which text holds it)."""
    quoted = ("no_leakage",) if shape is CallShape.MARKER_QUOTED and truth is None else ()
    return EXEMPT_CHECKS.get(shape, ()) + quoted


def call_replies(frame: CallFrame, shapes: tuple[CallShape, ...]) -> tuple[list[Reply], list[Skip]]:
    """The replies of the given call shapes for one session, and the shapes it could not make."""
    one = frame.written.get(Turn.ONE_CALL)
    if one is None or one.text is None:
        reason = one.reason if one else "no call was written"
        return [], [Skip(ORIGIN, shape.value, reason) for shape in shapes]
    split = split_call(one.text, frame.tools.weather, frame.think_end, frame.markers)
    replies: list[Reply] = []
    skips: list[Skip] = []
    note = "hand-written call: the template never writes calls" if one.hand else ""
    for shape in shapes:
        written = frame.written.get(NATIVE_SHAPES[shape]) if shape in NATIVE_SHAPES else None
        if written is not None and written.text is not None:
            truth = truth_for(frame, shape, written)
            replies.append(
                Reply(written.text, False, ORIGIN, shape.value, truth, note, exempt_checks(shape, truth),
                      MEANT_PROBLEMS.get(shape, ()))
            )
            continue
        if shape in NATIVE_SHAPES and shape not in COMPOSABLE_SHAPES:
            skips.append(Skip(ORIGIN, shape.value, written.reason if written else "no tool for this shape"))
            continue
        made = composed(frame, shape, split) if isinstance(split, CallText) else Skip(ORIGIN, shape.value, split)
        if isinstance(made, Skip):
            skips.append(made)
        else:
            why = f"composed: the template's own rendering failed ({written.reason})" if written else note
            truth = composed_truth(frame, shape, one)
            replies.append(Reply(made, False, ORIGIN, shape.value, truth, why, exempt_checks(shape, truth),
                                 MEANT_PROBLEMS.get(shape, ())))
    return replies, skips
