"""Structural checks of one finished reading: arguments are JSON objects that fit the offered tools' schemas, no
template marker leaks into the message, parallel calls come back whole and in the order written, and the
problems a parser reports agree with its reading."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema

from chatparity.model import STRUCTURAL_CHECKS, Message, Reading, Reply, Session, ToolCall, canonical_json
from harness.compare import compare, parsed_object
from harness.problem_checks import Asked, problems_break

__all__ = ["STRUCTURAL_CHECKS", "Structure", "check_reading", "combined_structure", "tool_schemas"]


@dataclass(frozen=True)
class Structure:
    """Which structural checks a reading holds (None: not judged) and the first one that broke ('' if none)."""

    arguments_json: bool | None = None
    arguments_schema: bool | None = None
    no_leakage: bool | None = None
    parallel_order: bool | None = None
    problems_agree: bool | None = None
    detail: str = ""

    def labelled(self, label: str) -> Structure:
        """The same verdict with `label` (e.g. the cut point) after its detail."""
        if not (self.detail and label):
            return self
        return dataclasses.replace(self, detail=f"{self.detail} ({label})")

    def columns(self, prefix: str = "") -> dict[str, Any]:
        """The row columns of this verdict, each check as 1, 0 or None, named with `prefix`."""
        values = {f"{prefix}{check}": as_flag(getattr(self, check)) for check in STRUCTURAL_CHECKS}
        return {**values, f"{prefix}structure_detail": self.detail}


def as_flag(value: bool | None) -> int | None:
    """A verdict as a store column: 1 held, 0 broken, None not judged."""
    return None if value is None else int(value)


DRAFTS = (jsonschema.Draft202012Validator, jsonschema.Draft7Validator)
"""The drafts a tool's schema is checked in: 2020-12, else draft 7 (where `items` may be a list of item
schemas, as Pydantic v1 writes a tuple)."""


class Unjudged(Exception):
    """A check that cannot be made of a reading; the message says why."""


def unjudged_schema(name: str) -> Unjudged:
    """The reason a tool's schema is not checked: it loops or nests deeper than the checker can follow."""
    return Unjudged(f"arguments_schema not judged: the schema of tool {name!r} loops ($ref) or nests too deep "
                    "to check")


class SchemaCheck:
    """One offered tool's parameters schema, valid in `draft`, as a check of call arguments: each distinct
    arguments text is checked once. A schema the checker cannot follow (a $ref loop, a schema nested deeper than
    Python recurses) makes the check Unjudged."""

    def __init__(self, name: str, schema: dict[str, Any], draft: type[Any] | None) -> None:
        self.name = name
        self.schema = schema
        self.draft = draft
        self.validator = draft(schema) if draft is not None else None
        self.found: dict[str, str | None] = {}

    def error(self, arguments: str, parsed: dict[str, Any]) -> str | None:
        """Where and how arguments (their text and the JSON object it parses as) break the schema, e.g.
        "['city']: 1 is not of type 'string'" (None when they fit it); Unjudged when the schema cannot be
        followed."""
        if self.validator is None:
            raise unjudged_schema(self.name)
        if arguments in self.found:
            return self.found[arguments]
        try:
            error = jsonschema.exceptions.best_match(self.validator.iter_errors(parsed))
        except RecursionError:
            self.validator = None
            raise unjudged_schema(self.name) from None
        found = None
        if error is not None:
            found = "".join(f"[{part!r}]" for part in error.absolute_path) + f": {error.message[:120]}"
        self.found[arguments] = found
        return found


def tool_schemas(session: Session) -> dict[str, SchemaCheck | None]:
    """The offered tools by name, each with the check of its parameters' JSON schema (None when that is no
    valid schema in any of DRAFTS, so only the tool's name is checked; a check with no draft when the schema
    nests too deep to be read, so it is not judged)."""
    schemas: dict[str, SchemaCheck | None] = {}
    for tool in session.tools:
        function = tool.get("function", tool)
        name = str(function.get("name", ""))
        schema = function.get("parameters") or {"type": "object"}
        try:
            draft = schema_draft(canonical_json(schema))
        except RecursionError:
            schemas[name] = SchemaCheck(name, schema, None)
            continue
        schemas[name] = None if draft is None else SchemaCheck(name, schema, draft)
    return schemas


@lru_cache(maxsize=1024)
def schema_draft(schema: str) -> type[Any] | None:
    """The first of DRAFTS in which a JSON schema (as canonical JSON text) is valid (None: in none);
    RecursionError when it nests deeper than the checker can follow."""
    for draft in DRAFTS:
        try:
            draft.check_schema(json.loads(schema))
        except jsonschema.exceptions.SchemaError:
            continue
        return draft
    return None


def arguments_json_break(calls: Sequence[ToolCall]) -> str | None:
    """The first call whose arguments are not a JSON object."""
    for index, call in enumerate(calls):
        found = parsed_object(call.arguments)
        if isinstance(found, str):
            return f"arguments_json: tool_calls[{index}].arguments {call.arguments[:60]!r} is {found}"
    return None


def arguments_schema_break(calls: Sequence[ToolCall], schemas: Mapping[str, SchemaCheck | None]) -> str | None:
    """The first call naming a tool that was not offered, whose arguments are not a JSON object, or whose
    arguments break its schema."""
    for index, call in enumerate(calls):
        if call.name not in schemas:
            offered = ", ".join(sorted(schemas)) or "none"
            return (
                f"arguments_schema: tool_calls[{index}].name {call.name!r} is not an offered tool ({offered})"
            )
        parsed = parsed_object(call.arguments)
        if isinstance(parsed, str):
            return f"arguments_schema: tool_calls[{index}].arguments {call.arguments[:60]!r} is {parsed}"
        check = schemas[call.name]
        found = None if check is None else check.error(call.arguments, parsed)
        if found is not None:
            return f"arguments_schema: tool_calls[{index}].arguments{found}"
    return None


def texts(reading: Message) -> list[tuple[str, str]]:
    """Every text of a message a marker may leak into, each with its field path."""
    found = [("content", reading.content), ("reasoning_content", reading.reasoning_content)]
    for index, call in enumerate(reading.tool_calls):
        found += [
            (f"tool_calls[{index}].name", call.name),
            (f"tool_calls[{index}].arguments", call.arguments),
        ]
    return found


def leakage_break(reading: Message, truth: Message | None, markers: Sequence[str]) -> str | None:
    """The first marker a text of the reading holds more often than the same text of the truth (a reply without
    truth means no marker)."""
    meant = dict(texts(truth)) if truth is not None else {}
    for path, text in texts(reading):
        for marker in markers:
            count = text.count(marker)
            if count > meant.get(path, "").count(marker):
                at = text.index(marker)
                return f"no_leakage: {path} holds marker {marker!r} @{at}"
    return None


def in_written_order(names: Sequence[str], text: str) -> bool:
    """Whether the names occur in the text one after another, in this order."""
    position = 0
    for name in names:
        found = text.find(name, position)
        if found < 0:
            return False
        position = found + len(name)
    return True


def parallel_order_break(reading: Message, reply: Reply) -> str | None:
    """Where parallel calls come back incomplete or out of order: against the truth when it has two calls or
    more, else two calls or more read must be named in the reply in the order read."""
    names = [call.name for call in reading.tool_calls]
    truth = reply.truth
    if truth is not None and len(truth.tool_calls) >= 2:
        meant = [call.name for call in truth.tool_calls]
        if names != meant:
            return f"parallel_order: calls {names} read, {meant} written"
        return None
    if len(names) >= 2 and not in_written_order(names, reply.text):
        return f"parallel_order: calls {names} are not named in the reply in this order"
    return None


def judged(reading: Message, reply: Reply, reference: Reading | None) -> dict[str, bool]:
    """Which checks apply to a reading of this reply: none that the reply breaks on purpose; the call checks
    only where there are calls, and not on a cut reply (its last call may be unfinished); problems_agree only
    where the parser reports problems and its reading matches llama.cpp's `reference`."""
    calls = bool(reading.tool_calls) and not reply.partial
    truth_calls = reply.truth is not None and len(reply.truth.tool_calls) >= 2
    applies = {
        "arguments_json": calls,
        "arguments_schema": calls,
        "no_leakage": True,
        "parallel_order": not reply.partial and (len(reading.tool_calls) >= 2 or truth_calls),
        "problems_agree": problems_judged(reading, reply, reference),
    }
    return {check: applies[check] and check not in reply.exempt for check in STRUCTURAL_CHECKS}


def problems_judged(reading: Reading, reply: Reply, reference: Reading | None) -> bool:
    """Whether the problems beside a reading are judged: the parser reports them and its reading (of a
    finished or a cut reply) matches llama.cpp's."""
    return reading.problems is not None and reference is not None and compare(reference, reading) is None


def reply_problems_break(reading: Reading, reply: Reply, asked: Asked) -> str | None:
    """problems_break for a reading of this reply: the problems it was written to show, finished or cut."""
    return problems_break(reading, asked, reply.meant_problems, reply.partial, reply.truth)


def check_reading(
    reading: Reading,
    reply: Reply,
    schemas: Mapping[str, SchemaCheck | None],
    markers: Sequence[str],
    asked: Asked,
    reference: Reading | None = None,
) -> Structure:
    """The structural checks of one finished reading of `reply`, the parser's against llama.cpp's `reference`
    (None for llama.cpp's own): a rejection is judged by problems_agree alone."""
    if not isinstance(reading, Message):
        if not problems_judged(reading, reply, reference) or "problems_agree" in reply.exempt:
            return Structure()
        found = reply_problems_break(reading, reply, asked)
        return Structure(problems_agree=found is None, detail=found or "")
    applies = judged(reading, reply, reference)
    wanted = [marker for marker in dict.fromkeys(markers) if marker]
    schema_break, unjudged = None, ""
    if applies["arguments_schema"]:
        try:
            schema_break = arguments_schema_break(reading.tool_calls, schemas)
        except Unjudged as reason:
            applies["arguments_schema"], unjudged = False, str(reason)
    breaks = {
        "arguments_json": arguments_json_break(reading.tool_calls) if applies["arguments_json"] else None,
        "arguments_schema": schema_break,
        "no_leakage": leakage_break(reading, reply.truth, wanted) if applies["no_leakage"] else None,
        "parallel_order": parallel_order_break(reading, reply) if applies["parallel_order"] else None,
        "problems_agree": reply_problems_break(reading, reply, asked) if applies["problems_agree"] else None,
    }
    return Structure(
        **{check: (breaks[check] is None) if applies[check] else None for check in STRUCTURAL_CHECKS},
        detail=next((found for found in breaks.values() if found), unjudged),
    )


def combined_structure(verdicts: Sequence[Structure]) -> Structure:
    """The checks of several readings (one per stream of a chunking): each held by all judged, the first broken
    named."""

    def every(values: list[bool | None]) -> bool | None:
        known = [value for value in values if value is not None]
        return all(known) if known else None

    return Structure(
        **{check: every([getattr(verdict, check) for verdict in verdicts]) for check in STRUCTURAL_CHECKS},
        detail=next((verdict.detail for verdict in verdicts if verdict.detail), ""),
    )
