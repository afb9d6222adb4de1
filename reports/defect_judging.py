"""Which replies may count against llama.cpp, and what failing construct a departure from the truth shows.

A reply counts against llama.cpp (the report's main section) only where its meaning comes from the template: the
template's own rendering of the message (a round trip), a thought placed as the template places it, or a form a
model sampling under llama.cpp's own grammar for the request can write (the grammar accepts it). A request whose
kwargs contradict its thinking switch, a reply to a tool the request does not offer, arguments the tool's schema
does not allow, corrupted call text, fuzz and forms neither the template nor the grammar produce are robustness
findings, reported apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from corpora import call_shapes, fuzz, roundtrip, thinking_shapes
from oracle.client import GrammarVerdict

THINKING_SWITCHES = {"thinking": True, "enable_thinking": True, "thinking_mode": "enabled", "skip_thinking": False}
"""Template kwargs that switch thinking on or off, each with the value that means on."""
SWITCH_OFF = {"thinking_mode": "disabled", "skip_thinking": True}
LITERAL_SUFFIXES = ("_with_json_literals", "_with_python_literals")
HEAD_SHAPES = (
    call_shapes.CallShape.MARKER_QUOTED.value, call_shapes.CallShape.DECOMPOSED_PROSE.value,
    call_shapes.CallShape.PROSE_BEFORE.value, call_shapes.CallShape.CALL_IN_THOUGHT.value,
    call_shapes.CallShape.CALL_AFTER_UNCLOSED_THOUGHT.value, call_shapes.CallShape.FOREIGN_THINK_TAGS.value,
    call_shapes.CallShape.NO_OPENING_WRAPPER.value,
)
"""Shapes that change what comes before a call, where a lazy grammar leaves the model free: the grammar's
acceptance says what they mean only where it constrains the reply from its start."""
REFUSED_AFTER = {
    "after_tool": "a reply after a tool result",
    "after_reasoning": "a reply after an earlier turn's reasoning",
    "typed_tools": "a call to a tool with typed schemas",
}
"""What a refused reply shows, by the conversation before it where that is what the refusals have in common."""
NOT_A_STRING = "reads a non-string argument as a string"
NOT_JSON = "arguments text not JSON"


def contradictory_kwargs(thinking: bool, kwargs: Mapping[str, Any]) -> str:
    """Why a request's kwargs contradict its thinking switch ('' where they do not): a template kwarg other than
    enable_thinking that turns thinking the other way."""
    for name, value in kwargs.items():
        if name == "enable_thinking" or name not in THINKING_SWITCHES:
            continue
        on = value == THINKING_SWITCHES[name] or (name not in SWITCH_OFF and value is True)
        off = value == SWITCH_OFF.get(name, False)
        if (on and not thinking) or (off and thinking):
            return f"contradictory kwargs: enable_thinking={json.dumps(thinking)} with {name}={json.dumps(value)}"
    return ""


def shape_reason(origin: str, shape: str, parallel: bool = True) -> str:
    """Why a shape is a robustness finding whatever llama.cpp's grammar says ('' where the grammar decides), in a
    request that allows parallel calls or not."""
    if origin == fuzz.ORIGIN:
        return "random markers and text (fuzz)"
    if origin != call_shapes.ORIGIN:
        return ""
    try:
        named = call_shapes.CallShape(shape)
    except ValueError:
        return ""
    exempt = call_shapes.EXEMPT_CHECKS.get(named, ())
    if named in (call_shapes.CallShape.UNKNOWN_NAME, call_shapes.CallShape.TWO_CALLS_ONE_UNKNOWN):
        return "a call to a tool the request does not offer"
    if named is call_shapes.CallShape.SAME_CALL_TWICE and not parallel:
        return "two calls where the request allows one (parallel_tool_calls false)"
    if "arguments_json" in exempt:
        return "corrupted call text"
    if "arguments_schema" in exempt:
        return "arguments the tool's schema does not allow"
    return ""


def source_of(origin: str, shape: str) -> tuple[str, str]:
    """The origin and shape a cut reply was cut from (`roundtrip:one_call@in_name`), else the reply's own."""
    if ":" in shape and "@" in shape and not shape.startswith("fuzz:"):
        source, _, _ = shape.rpartition("@")
        origin, _, shape = source.partition(":")
    return origin, shape


def template_form(origin: str, shape: str, has_truth: bool) -> bool:
    """Whether the reply is the template's own form: its rendering of the message (a round trip, not rewritten
    with other literals), or a thought with the template's tags placed as it places them (where the corpus knows
    its meaning)."""
    if origin == roundtrip.ORIGIN:
        return not shape.endswith(LITERAL_SUFFIXES)
    return origin == thinking_shapes.ORIGIN and has_truth


def robustness_reason(
    origin: str, shape: str, partial: bool, has_truth: bool, grammar: str, contradiction: str, parallel: bool = True
) -> str:
    """'' where a reply counts against llama.cpp, else why it is a robustness finding (a cut reply by the reply it
    was cut from and the grammar's verdict on the text so far; `parallel`: whether the request allows parallel
    calls)."""
    if contradiction:
        return contradiction
    if partial:
        origin, shape = source_of(origin, shape)
    found = shape_reason(origin, shape, parallel)
    if found:
        return found
    if template_form(origin, shape, has_truth or partial):
        return ""
    verdict = GrammarVerdict.of_text(grammar) if grammar else None
    if verdict is not None and verdict.verdict == "accepts" and (shape not in HEAD_SHAPES or verdict.start == 0):
        return ""
    if verdict is not None and verdict.verdict == "accepts":
        return "a form the template never writes (written where llama.cpp's lazy grammar leaves the model free)"
    said = {
        None: "llama.cpp's grammar was not asked",
        "free": "the request has no grammar",
        "untriggered": "llama.cpp's grammar is never triggered",
    }.get(verdict.verdict if verdict else None, f"llama.cpp's grammar {verdict.text() if verdict else ''}")
    return f"a form the template never writes ({said})"


def edges_trimmed(reading: Mapping[str, Any]) -> dict[str, Any]:
    """A reading with whitespace at the edges of its content and reasoning removed (the prompt owns it)."""
    return {
        **reading,
        "content": (reading.get("content") or "").strip(),
        "reasoning_content": (reading.get("reasoning_content") or "").strip(),
    }


def arguments_value(text: str) -> Any:
    """Call arguments as parsed JSON where they parse, else the text."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def same_meaning(oracle: Mapping[str, Any], truth: Mapping[str, Any]) -> bool:
    """Whether llama.cpp's reading says what the truth says: text equal but for whitespace at its edges, calls by
    position with arguments as parsed JSON, a call id only where the template wrote one."""
    if "rejected" in oracle:
        return False
    mine, meant = edges_trimmed(oracle), edges_trimmed(truth)
    if (mine["content"], mine["reasoning_content"]) != (meant["content"], meant["reasoning_content"]):
        return False
    calls, wanted = oracle.get("tool_calls") or [], truth.get("tool_calls") or []
    if len(calls) != len(wanted):
        return False
    return all(
        call.get("name") == want.get("name")
        and arguments_value(call.get("arguments", "")) == arguments_value(want.get("arguments", ""))
        and (not want.get("id") or call.get("id") == want.get("id"))
        for call, want in zip(calls, wanted)
    )


def json_kind(value: Any) -> str:
    """A JSON value's type name as JSON schema says it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def value_change(meant: Any, got: Any) -> str:
    """How a parsed argument value departs, in words that do not name the argument."""
    if isinstance(meant, dict) and isinstance(got, dict):
        for key, value in meant.items():
            if key not in got:
                return "drops an argument"
            if got[key] != value:
                return value_change(value, got[key])
        return "adds an argument"
    if isinstance(meant, list) and isinstance(got, list) and len(meant) == len(got):
        return next(value_change(left, right) for left, right in zip(meant, got) if left != right)
    if isinstance(got, str) and not isinstance(meant, str):
        return NOT_A_STRING
    if json_kind(meant) != json_kind(got):
        return f"reads {article(json_kind(meant))} argument as {article(json_kind(got))}"
    return f"alters {article(json_kind(meant))} argument"


def article(word: str) -> str:
    """A word with its indefinite article."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def truth_shape(truth: Mapping[str, Any]) -> str:
    """What a message holds, in a few words: 'reasoning, content and 2 calls'."""
    calls = len(truth.get("tool_calls") or [])
    parts = [name for name in ("reasoning", "content") if (truth.get(f"{name}_content" if name == "reasoning"
                                                                      else name) or "").strip()]
    if calls:
        parts.append("a call" if calls == 1 else f"{calls} calls")
    return " and ".join(parts) or "an empty message"


def added_markers(got: str, meant: str, markers: tuple[str, ...]) -> list[str]:
    """The markers `got` holds more often than `meant`."""
    return [marker for marker in markers if got.count(marker) > meant.count(marker)]


def departure(oracle: Mapping[str, Any], truth: Mapping[str, Any], markers: tuple[str, ...],
              conversation: str = "single") -> tuple[str, str]:
    """The kind and failing construct of a reading that departs from the truth, both without names of tools,
    arguments or templates, so one root cause reads alike wherever it shows (a refusal by the conversation
    before the reply where that is not the single question)."""
    if "rejected" in oracle:
        with_calls = f"a reply {'with' if truth.get('tool_calls') else 'without'} calls"
        return "rejects the reply", REFUSED_AFTER.get(conversation, with_calls)
    calls, wanted = oracle.get("tool_calls") or [], truth.get("tool_calls") or []
    if len(calls) < len(wanted):
        return "loses a call", f"{len(calls)} of {len(wanted)} calls read"
    if len(calls) > len(wanted):
        return "invents a call", f"{len(calls)} calls read, {len(wanted)} written"
    for call, want in zip(calls, wanted):
        if call.get("name") != want.get("name"):
            return "changes a call", "alters the tool name"
        got, meant = arguments_value(call.get("arguments", "")), arguments_value(want.get("arguments", ""))
        if isinstance(got, str) and not isinstance(meant, str):
            return "returns arguments that are not JSON", NOT_JSON
        if got != meant:
            return "changes a call", value_change(meant, got)
        if want.get("id") and call.get("id") != want.get("id"):
            return "changes a call", "alters the call id the template wrote"
    fields = (("content", "content", "reasoning_content"), ("reasoning_content", "reasoning", "content"))
    for field, name, other in fields:
        got, meant = (oracle.get(field) or "").strip(), (truth.get(field) or "").strip()
        if meant and meant not in got and meant in (oracle.get(other) or ""):
            return "moves text", f"{name} read as {'reasoning' if name == 'content' else 'content'}"
    for field, name, _ in fields:
        got, meant = (oracle.get(field) or "").strip(), (truth.get(field) or "").strip()
        if got == meant:
            continue
        leaked = added_markers(got, meant, markers)
        if leaked:
            return "leaves markers in the text", f"{', '.join(leaked)} in {name}"
        if len(got) < len(meant):
            return "drops text", f"drops {name}"
        return "alters text", f"alters {name}"
    return "alters text", "alters the message"


def grammar_order(schema: Mapping[str, Any]) -> list[str]:
    """The order llama.cpp's json-schema-to-grammar makes a model write an object's properties in: the required
    ones in the schema's order, then the optional ones in the schema's order."""
    properties = list(schema.get("properties") or {})
    required = set(schema.get("required") or ())
    return [name for name in properties if name in required] + [name for name in properties if name not in required]


def written_in_grammar_order(reply: str, truth: Mapping[str, Any], tools: list[dict[str, Any]]) -> bool:
    """Whether the reply writes each call's arguments in the order a model sampling under llama.cpp's grammar writes
    them (the arguments' names as they first show after the call's name); where it does not, llama.cpp's grammar
    never lets a model write the reply, and its parser may refuse it for that alone."""
    schemas = {tool.get("function", tool).get("name"): tool.get("function", tool).get("parameters") or {}
               for tool in tools}
    start = 0
    for call in truth.get("tool_calls") or []:
        arguments = arguments_value(call.get("arguments", ""))
        start = max(reply.find(call.get("name", ""), start), 0)
        if not isinstance(arguments, dict) or not arguments:
            continue
        order = grammar_order(schemas.get(call.get("name"), {}))
        found = {name: reply.find(name, start) for name in arguments if name in order}
        written = sorted((name for name in found if found[name] >= 0), key=found.__getitem__)
        if written != sorted(written, key=order.index):
            return False
        start = max(found.values(), default=start)
    return True
