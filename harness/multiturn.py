"""The multi-turn loop: three turns per template and mode, each reply parsed and put back as history."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Any

from chatparity.model import (
    Message,
    Mode,
    ParserCrashed,
    ParserTimeout,
    ParserUnderTest,
    ParserUnsupported,
    Reading,
    Rejection,
    Session,
    ToolMode,
)
from corpora.conversations import SYSTEM
from corpora.jinja_env import RENDER_ERRORS, error_text
from corpora.multiturn_script import ScriptTurn, following, history_message, opening, text_script, tool_script
from corpora.planning import PlannedSession, checked_source, modes
from corpora.prompts import render_chat
from corpora.roundtrip import render_turn, truth_of
from corpora.tools import GET_WEATHER, STANDARD_TOOLS
from corpora.turns import generation_prompt, opens_thought
from corpora.written_turns import hand_written
from harness.compare import compare
from harness.multiturn_checks import AppendCheck, BoundaryCheck, TurnPrompts, append_check, boundary_check
from oracle.client import OracleError
from templates.index import TemplateEntry

RENDERERS = ("llama.cpp", "jinja2")
CALLING_MODES = (ToolMode.AUTO, ToolMode.REQUIRED, ToolMode.PARALLEL)


@dataclass(frozen=True)
class TurnRow:
    """One turn of one loop under one renderer: the append, boundary and parse checks."""

    template: str
    family: str
    mode: str
    loop: str
    turn: int
    renderer: str
    append: str = ""
    offset: int | None = None
    expected: str = ""
    actual: str = ""
    breaks: str = ""
    boundary: str = ""
    parses: str = ""
    parser: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """This row as a plain dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Rendered:
    """A prompt ending with its generation prompt, and the oracle handle reading replies to it (0: jinja2)."""

    prompt: str
    generation_prompt: str
    handle: int = 0


class LoopStopped(Exception):
    """The loop cannot go on: a template that does not render, or a reply that cannot be written or read."""


def session_at(
    entry: TemplateEntry, source: str, mode: Mode, history: list[dict[str, Any]]
) -> PlannedSession:
    """The session whose reply comes next after `history`, with its jinja2 prompt."""
    session = Session(
        template=entry.name,
        template_source=source,
        template_sha256=entry.sha256,
        bos=entry.bos,
        eos=entry.eos,
        mode=mode,
        conversation="multiturn",
        messages=tuple(history),
        tool_defs=STANDARD_TOOLS,
    )
    try:
        without = render_chat(entry, source, history, session.tools, mode.thinking, session.kwargs, False)
        prompt = render_chat(entry, source, history, session.tools, mode.thinking, session.kwargs, True)
    except RENDER_ERRORS as error:
        raise LoopStopped(f"jinja2 cannot render the history: {error_text(error)}") from error
    gp = generation_prompt(without, prompt)
    session = dataclasses.replace(session, prompt=prompt)
    return PlannedSession(session, entry, "", opens_thought(gp, entry.think_start, entry.think_end))


def jinja_rendered(planned: PlannedSession) -> Rendered:
    """The jinja2 prompt of a session and its generation prompt."""
    session = planned.session
    assert session.prompt is not None
    without = render_chat(
        planned.entry,
        session.template_source,
        session.messages,
        session.tools,
        session.enable_thinking,
        session.kwargs,
        False,
    )
    return Rendered(session.prompt, generation_prompt(without, session.prompt))


def oracle_rendered(oracle: Any, session: Session) -> Rendered:
    """llama.cpp's prompt of a session, its generation prompt and the handle to read the reply."""
    try:
        render = oracle.render(session.render_request())
    except OracleError as error:
        raise LoopStopped(f"llama.cpp cannot render the history: {error}") from error
    return Rendered(render.prompt, render.generation_prompt, render.handle)


def oracle_reading(oracle: Any, handle: int, text: str) -> Reading:
    """llama.cpp's reading of a reply; a crash or a timeout stops the loop."""
    try:
        return oracle.parse(handle, text)
    except OracleError as error:
        raise LoopStopped(f"llama.cpp cannot read the reply: {error}") from error


def written(planned: PlannedSession, meant: dict[str, Any]) -> tuple[str | None, str]:
    """The template's own text for a turn (rendered with tools offered when it needs them), else by hand."""
    turn = render_turn(planned, meant)
    session = planned.session
    if turn.text is None and not session.mode.tools.offers_tools:
        offering = dataclasses.replace(session.mode, tools=ToolMode.AUTO)
        turn = render_turn(
            session_at(planned.entry, session.template_source, offering, list(session.messages)), meant
        )
    if turn.text is not None:
        return turn.text, turn.reason
    hand = None if meant.get("reasoning_content") else hand_written(planned, meant)
    if hand is not None:
        return hand, "written by hand in the template's call syntax"
    return None, turn.reason


def reply_text(planned: PlannedSession, meant: dict[str, Any], turn: int) -> tuple[str, str]:
    """The reply the template writes for the turn, and a note on how it was written."""
    text, reason = written(planned, meant)
    if text is not None:
        return text, reason
    thought = meant.get("reasoning_content", "")
    bare, _ = written(planned, {key: value for key, value in meant.items() if key != "reasoning_content"})
    entry = planned.entry
    if not thought or bare is None or not entry.think_end:
        raise LoopStopped(f"the template cannot write reply {turn}: {reason}")
    note = f"thought added by hand: {reason}"
    return with_thought(bare, thought, entry.think_start, entry.think_end), note


def with_thought(text: str, thought: str, think_start: str, think_end: str) -> str:
    """A reply with a thought put into its empty thought, or before it when it has none."""
    if text.startswith(think_end):
        return thought + text
    rest = text.removeprefix(think_start).lstrip()
    if think_start and text.startswith(think_start) and rest.startswith(think_end):
        return think_start + thought + rest
    return think_start + thought + think_end + text


def script_for(entry: TemplateEntry, mode: Mode) -> tuple[str, tuple[ScriptTurn, ...]]:
    """A tool loop where the mode lets the model call and the template writes calls, else a text loop."""
    if mode.tools in CALLING_MODES and entry.writes_calls:
        return "tools", tool_script(calls_only=mode.tools is ToolMode.REQUIRED)
    return "text", text_script()


def trimmed(reading: Reading) -> Reading:
    """A reading without the whitespace around its reasoning and content (how a template lays a turn out)."""
    if isinstance(reading, Rejection):
        return reading
    return dataclasses.replace(
        reading, content=reading.content.strip(), reasoning_content=reading.reasoning_content.strip()
    )


def verdict(expected: Reading, actual: Reading) -> str:
    """'match', or the mismatch kind and where it is."""
    found = compare(expected, actual)
    return "match" if found is None else f"{found.kind.value}: {found.detail}"


def read_once(parser: ParserUnderTest, session: Session, text: str) -> Reading:
    """The parser's whole read of a finished reply, in a reader of its own closed after."""
    reader = parser.open(session)
    try:
        return reader.parse(text, False)
    finally:
        reader.close()


def parser_verdict(
    parser: ParserUnderTest | None, session: Session, text: str, oracle_reading: Reading
) -> str:
    """How the parser under test reads the reply against llama.cpp ('' when no parser is under test)."""
    if parser is None:
        return ""
    try:
        reading = read_once(parser, session, text)
    except ParserUnsupported as error:
        return f"unsupported: {error}"
    except ParserTimeout as error:
        return f"parser_timeout: {error}"
    except ParserCrashed as error:
        return f"parser_crashed: {error}"
    return verdict(oracle_reading, reading)


def reasoning_of(history: list[dict[str, Any]]) -> tuple[str, ...]:
    """The thoughts of the assistant turns in a history."""
    return tuple(
        m["reasoning_content"] for m in history if m.get("role") == "assistant" and m.get("reasoning_content")
    )


def turn_ends(entry: TemplateEntry) -> tuple[str, ...]:
    """The template's turn-end markers (its eos included), without repeats."""
    return tuple(dict.fromkeys(end for end in (*entry.end_of_turn, entry.eos) if end))


def break_name(append: AppendCheck, boundary: BoundaryCheck | None) -> str:
    """The break a turn shows: the append's, else the boundary's, '' when none."""
    found = append.breaks or (boundary.breaks if boundary is not None else None)
    return found.value if found is not None else ""


def where(append: AppendCheck, boundary: BoundaryCheck | None, ends: tuple[str, ...]) -> dict[str, Any]:
    """The offset into the next prompt and both sides there: the append's break, else the boundary's."""
    if append.offset is not None:
        return {"offset": append.offset, "expected": append.expected, "actual": append.actual}
    if boundary is not None and boundary.breaks is not None:
        return {
            "offset": boundary.offset,
            "expected": "one of " + " ".join(ends),
            "actual": repr(boundary.span),
        }
    return {}


def checked_turn(
    entry: TemplateEntry,
    before: Rendered,
    after: Rendered,
    reply: str,
    reading: Message,
    history: list[dict[str, Any]],
    next_text: str,
) -> tuple[AppendCheck, BoundaryCheck | None]:
    """The append check of a turn under one renderer, and the boundary check where the reply appends."""
    turn = TurnPrompts(
        prompt=before.prompt,
        generation_prompt=before.generation_prompt,
        reply=reply,
        next_prompt=after.prompt,
        reasoning=reading.reasoning_content,
        content=reading.content,
        has_calls=bool(reading.tool_calls),
        earlier_reasoning=reasoning_of(history),
        system_text=SYSTEM["content"],
        next_text=next_text,
        tools_text=GET_WEATHER["function"]["description"],
        think_start=entry.think_start,
        think_end=entry.think_end,
    )
    append = append_check(turn)
    return append, boundary_check(turn, turn_ends(entry)) if append.ok else None


def run_loop(
    entry: TemplateEntry, source: str, mode: Mode, oracle: Any, parser: ParserUnderTest | None
) -> list[TurnRow]:
    """The three turns of one template and mode: a row per turn and renderer, or a stop row and why."""
    loop, script = script_for(entry, mode)
    rows: list[TurnRow] = []

    def row(turn: int, renderer: str, **fields: Any) -> TurnRow:
        return TurnRow(entry.name, entry.family, mode.label, loop, turn, renderer, **fields)

    history = opening()
    thinks = mode.thinking and bool(entry.think_end)
    turn = 1
    try:
        planned = session_at(entry, source, mode, history)
        prompts = {"llama.cpp": oracle_rendered(oracle, planned.session), "jinja2": jinja_rendered(planned)}
        for turn, step in enumerate(script, start=1):
            meant = step.meant(thinks and entry.think_end not in prompts["jinja2"].generation_prompt)
            text, note = reply_text(planned, meant, turn)
            reading = oracle_reading(oracle, prompts["llama.cpp"].handle, text)
            truth = truth_of(meant, text)
            parses = verdict(trimmed(truth), trimmed(reading))
            parsed_by = parser_verdict(parser, planned.session, text, reading)
            if isinstance(reading, Rejection):
                raise LoopStopped(f"llama.cpp rejects reply {turn}: {reading.reason}")
            reply = history_message(reading)
            after = following(turn - 1, loop == "tools", reply)
            earlier = list(history)
            history = history + [reply, *after]
            planned = session_at(entry, source, mode, history)
            following_prompts = {
                "llama.cpp": oracle_rendered(oracle, planned.session),
                "jinja2": jinja_rendered(planned),
            }
            for renderer in RENDERERS:
                append, boundary = checked_turn(
                    entry,
                    prompts[renderer],
                    following_prompts[renderer],
                    text,
                    reading,
                    earlier,
                    str(after[0]["content"]),
                )
                rows.append(
                    row(
                        turn,
                        renderer,
                        append="ok" if append.ok else "break",
                        breaks=break_name(append, boundary),
                        boundary=boundary.status if boundary else "",
                        parses=parses,
                        parser=parsed_by,
                        note=note,
                        **where(append, boundary, turn_ends(entry)),
                    )
                )
            prompts = following_prompts
    except LoopStopped as error:
        rows.append(row(turn, "-", append="stopped", note=str(error)))
    return rows


def template_modes(entry: TemplateEntry, mode_glob: str | None) -> Iterator[Mode]:
    """The quick profile's modes of a template (thinking × first kwarg values × tools), by label glob."""
    for mode in modes(entry, "quick"):
        if mode_glob is None or fnmatch(mode.label, mode_glob):
            yield mode


def run_all(
    entries: list[TemplateEntry],
    oracle: Any,
    parser: ParserUnderTest | None,
    mode_glob: str | None = None,
    version: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[TurnRow]:
    """Every loop of the templates, in template and mode order."""
    rows: list[TurnRow] = []
    for entry in sorted(entries, key=lambda each: each.name):
        source = checked_source(entry, version)
        for mode in template_modes(entry, mode_glob):
            rows += run_loop(entry, source, mode, oracle, parser)
        if progress is not None:
            progress(entry.name)
    return rows
