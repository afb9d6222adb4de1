"""Planning sessions: every template × mode × conversation, rendered by jinja2, by profile and selection."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Any

from chatparity.model import (
    REASONING_FORMAT,
    REASONING_FORMATS,
    InputError,
    Mode,
    Session,
    ToolMode,
    profile_named,
)
from corpora.conversations import Conversation, messages
from corpora.jinja_env import RENDER_ERRORS, error_text
from corpora.prompts import THINKING_VARIABLE, chat, rendered
from corpora.tools import STANDARD_TOOLS, SWEEP_TOOLS
from corpora.turns import generation_prompt, opens_thought
from templates.index import TemplateEntry, load_index, sha256_text, template_source


class PlanError(InputError):
    """The selection or the upstream templates do not fit the index."""


@dataclass(frozen=True)
class PlannedSession:
    """A session, its index entry, the jinja2 error ('' if none) and if its prompt opens a thought."""

    session: Session
    entry: TemplateEntry
    jinja_error: str
    opens_thought: bool


def kwarg_settings(entry: TemplateEntry, profile: str) -> list[tuple[tuple[str, Any], ...]]:
    """The kwargs sets to try: none, then one kwarg at a time with each value (the first only, in quick)."""
    settings: list[tuple[tuple[str, Any], ...]] = [()]
    for name, values in entry.kwargs:
        for value in values if profile == "full" else values[:1]:
            settings.append(((name, value),))
    return settings


def kwarg_thinking_modes(entry: TemplateEntry, source: str, profile: str) -> list[Mode]:
    """For a template with thinking tags that reads enable_thinking, the flag passed through
    chat_template_kwargs against the top-level one (a client switching thinking off per request; in full, also
    on), without tools."""
    if not (entry.think_start and entry.think_end and THINKING_VARIABLE in source):
        return []
    switched = (True, False) if profile == "full" else (True,)
    return [Mode(thinking, ToolMode.NONE, ((THINKING_VARIABLE, not thinking),)) for thinking in switched]


def thinks(mode: Mode) -> bool:
    """Whether a mode's request turns thinking on: enable_thinking in chat_template_kwargs overrides the flag."""
    value = mode.kwargs_dict.get(THINKING_VARIABLE)
    return value if isinstance(value, bool) else mode.thinking


def reasoning_format_modes(entry: TemplateEntry, profile: str) -> list[Mode]:
    """think/auto with each reasoning format but llama-server's default, for a template that thinks: in the
    full profile every one, in quick the first of its family (by file name)."""
    if not entry.think_start:
        return []
    if profile != "full" and entry.name != first_thinking_template(entry.family):
        return []
    return [Mode(True, ToolMode.AUTO, (), name) for name in REASONING_FORMATS if name != REASONING_FORMAT]


def first_thinking_template(family: str) -> str:
    """The first template of a family, by file name, that has thinking tags."""
    return min(name for name, entry in load_index().items() if entry.family == family and entry.think_start)


def modes(entry: TemplateEntry, profile: str, source: str = "") -> list[Mode]:
    """Thinking on/off × kwargs sets × the five tool modes, then the kwarg-switched thinking modes and the
    reasoning formats."""
    return [
        Mode(thinking, tools, kwargs)
        for thinking in (True, False)
        for kwargs in kwarg_settings(entry, profile)
        for tools in ToolMode
    ] + kwarg_thinking_modes(entry, source, profile) + reasoning_format_modes(entry, profile)


TYPED_TOOL_MODES = (ToolMode.AUTO, ToolMode.REQUIRED, ToolMode.PARALLEL)


def conversations(mode: Mode, profile: str) -> list[Conversation]:
    """The conversations of a mode: all in the full profile; in quick, the others only for think/auto (in
    llama-server's default reasoning format). The
    typed-tools session (the standard tools and one whose schemas vary as real APIs' do) only where calls are
    asked for: every calling mode in full, think/parallel (whose call arguments stream) in quick."""
    full = profile == "full"
    default_format = mode.reasoning_format == REASONING_FORMAT
    typed = mode.tools in TYPED_TOOL_MODES and not mode.kwargs and default_format and (
        full or (mode.thinking and mode.tools is ToolMode.PARALLEL)
    )
    if full or (mode.thinking and mode.tools is ToolMode.AUTO and not mode.kwargs and default_format):
        standard = [conversation for conversation in Conversation if conversation is not Conversation.TYPED_TOOLS]
    else:
        standard = [Conversation.SINGLE]
    return standard + ([Conversation.TYPED_TOOLS] if typed else [])


def plan_session(entry: TemplateEntry, source: str, mode: Mode, conversation: Conversation) -> PlannedSession:
    """One session rendered by jinja2 (prompt None and the error kept when it fails)."""
    session = Session(
        template=entry.name,
        template_source=source,
        template_sha256=entry.sha256,
        bos=entry.bos,
        eos=entry.eos,
        mode=mode,
        conversation=conversation.value,
        messages=messages(conversation),
        tool_defs=SWEEP_TOOLS if conversation is Conversation.TYPED_TOOLS else STANDARD_TOOLS,
    )
    history = chat(entry, source, session.messages, session.tools, mode.thinking, session.kwargs)
    try:
        prompt = rendered(history, True)
        without = rendered(history, False)
    except RENDER_ERRORS as error:
        return PlannedSession(session, entry, error_text(error), False)
    gp = generation_prompt(without, prompt)
    session = Session(**{**session.__dict__, "prompt": prompt})
    return PlannedSession(session, entry, "", opens_thought(gp, entry.think_start, entry.think_end))


def checked_source(entry: TemplateEntry, version: str | None) -> str:
    """The upstream source of an indexed template, refused when its hash no longer matches the index."""
    source = template_source(entry.name, version)
    if sha256_text(source) != entry.sha256:
        raise PlanError(
            f"template {entry.name} at llama-cpp-python {version or 'the default pin'} does not match "
            "templates/index.json "
            f"(sha256 {sha256_text(source)[:12]} vs {entry.sha256[:12]}); run `chatparity templates check`"
        )
    return source


def plan(
    profile: str = "quick",
    templates: str | None = None,
    family: str | None = None,
    mode: str | None = None,
    version: str | None = None,
) -> list[PlannedSession]:
    """The sessions of a profile, selected by template file-name globs (comma-separated), a family and a
    mode-label glob."""
    try:
        profile_named(profile)
    except ValueError as error:
        raise PlanError(str(error)) from None
    index = load_index()
    entries = [
        entry
        for name, entry in sorted(index.items())
        if (templates is None or any(fnmatch(name, glob) for glob in templates.split(",")))
        and (family is None or entry.family.casefold() == family.casefold())
    ]
    if not entries:
        families = ", ".join(sorted({entry.family for entry in index.values()}))
        raise PlanError(
            f"no template matches templates={templates!r} family={family!r} "
            f"(`chatparity templates list` lists the templates; families: {families})"
        )
    planned: list[PlannedSession] = []
    for entry in entries:
        source = checked_source(entry, version)
        for each in modes(entry, profile, source):
            if mode is not None and not fnmatch(each.label, mode):
                continue
            planned += [plan_session(entry, source, each, conv) for conv in conversations(each, profile)]
    return planned
