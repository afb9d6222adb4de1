"""Sessions and replies for the reply tests: real templates from the index, replies written by each
template itself (its own rendering of calls) plus hand-made variants, and reading normalisation."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import reply
from chatparity.model import Message as Reading
from chatparity.model import Rejection, Session
from corpora.planning import plan
from corpora.prompts import render_chat
from reply.rendering import render
from reply.syntaxes import registered
from templates.index import load_index

JINJA2_RENDER_FAILS = ("CohereForAI-c4ai-command-r-plus-tool_use.jinja",)


def syntax_templates() -> dict[str, tuple[str, ...]]:
    """Each syntax the project parser implements and the templates the index says are written in it (but the
    ones jinja2 cannot render with tools, whose sessions open as RenderFailed; their own test modules cover them)."""
    implemented = {syntax.name for syntax in registered()}
    found: dict[str, list[str]] = {}
    for name, entry in sorted(load_index().items()):
        if entry.syntax in implemented and name not in JINJA2_RENDER_FAILS:
            found.setdefault(entry.syntax, []).append(name)
    return {syntax: tuple(names) for syntax, names in sorted(found.items())}


SYNTAX_TEMPLATES = syntax_templates()
MODES = ("think/auto", "nothink/auto", "think/required", "think/parallel", "think/none", "nothink/choice_none")

WEATHER = ("get_weather", {"city": "Rio", "days": 4})
TIME = ("get_time", {})
EVENT = ("create_event", {"event": {"title": "Lunch", "place": {"city": "Oslo", "room": 3}}, "attendees": ["a", "b"]})
CODE = ("run_code", {"language": "python", "code": "print('hi')\nx = {\"a\": 1}"})

GENERIC = ("Hello", "", "  Hello there \n", "<think>x</think>Hello", "<think>\nx\n</think>\n\nHello", "x</think>y",
           "Hello <think>x</think> bye", "<think>unfinished", "a</think>", "</think>b", "<think></think>", "\n\nHi")


@cache
def sessions(template: str) -> tuple[Session, ...]:
    """The template's single-conversation sessions in the modes the reply tests use."""
    found = {p.session.mode.label: p.session for p in plan("quick", templates=template)
             if p.session.conversation == "single"}
    return tuple(found[m] for m in MODES if m in found)


def session(template: str, mode: str) -> Session:
    """One single-conversation session of a template by mode label (any mode the quick profile plans)."""
    return next(p.session for p in plan("quick", templates=template)
                if p.session.conversation == "single" and p.session.mode.label == mode)


def written_turn(s: Session, calls: list[tuple[str, dict[str, Any]]], content: str = "",
                 reasoning: str = "") -> str | None:
    """What the template writes for an assistant turn with these calls, without its end-of-turn marker."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"call{i:05d}", "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, (n, a) in enumerate(calls)]
    if reasoning:
        message["reasoning_content"] = reasoning
    args = {"bos": s.bos, "eos": s.eos, "tools": list(s.tool_defs), "enable_thinking": s.enable_thinking,
            "extra": {**s.kwargs, "enable_thinking": s.enable_thinking}}
    try:
        base = render(s.template_source, messages=list(s.messages), add_generation_prompt=True, **args)
        full = render(s.template_source, messages=[*s.messages, message], add_generation_prompt=False, **args)
    except Exception:  # noqa: BLE001 - a template may raise anything; the corpora's context is tried next
        try:  # the corpora's render context, which renders templates that need arguments as JSON text
            entry = load_index()[s.template]
            base = render_chat(entry, s.template_source, list(s.messages), list(s.tool_defs), s.enable_thinking,
                               s.kwargs, True)
            full = render_chat(entry, s.template_source, [*s.messages, message], list(s.tool_defs),
                               s.enable_thinking, s.kwargs, False)
        except Exception:  # noqa: BLE001 - a template may raise anything; the turn is then unknown (None)
            return None
    size = 0
    while size < min(len(base), len(full)) and base[size] == full[size]:
        size += 1
    text = full[size:]
    for marker in load_index()[s.template].end_of_turn:
        cut = text.rfind(marker)
        if cut >= 0:
            text = text[:cut]
    return text.rstrip("\n") if text.strip() else None


def replies(s: Session) -> list[tuple[str, bool]]:
    """(text, partial) pairs: generic texts, the template's own call turns, and broken variants of them."""
    out: list[tuple[str, bool]] = [(t, False) for t in GENERIC]
    calls = [t for t in (written_turn(s, spec) for spec in ([WEATHER], [TIME], [EVENT], [CODE], [WEATHER, TIME]))
             if t]
    calls += [t for t in (written_turn(s, [WEATHER], content="Let me check."),
                          written_turn(s, [WEATHER], reasoning="I should call it.")) if t]
    out += [(t, False) for t in calls]
    for text in calls[:2]:
        out += [(text + "\nDone.", False), ("Sure. " + text, False), (text.replace("get_weather", "get_wether"), False),
                (text.replace("4", '"4"'), False), (text.replace("}", "", 1), False)]
        out += [(text[:cut], True) for cut in (len(text) // 3, len(text) // 2, len(text) - 3)]
    return out


def normal(read: Any) -> tuple:
    """A reading for comparison: rejection, or reasoning, content and calls with arguments as parsed JSON."""
    if isinstance(read, (Rejection, reply.Rejected)):
        return ("rejected",)
    calls = []
    for call in read.tool_calls:
        try:
            arguments = json.dumps(json.loads(call.arguments), sort_keys=True)
        except ValueError:
            arguments = "raw:" + call.arguments
        calls.append((call.name, arguments))
    return (read.reasoning_content, read.content, tuple(calls))


def mine(read: Any, *args: Any, **kwargs: Any) -> Any:
    """A reading of the project parser (`read(*args, **kwargs)`): the message, or the Rejected exception."""
    try:
        return read(*args, **kwargs)
    except reply.Rejected as refusal:
        return refusal


def as_reading(message: reply.Message) -> Reading:
    """A project message as a harness reading."""
    return Reading.of(message)


def outcome(action, *args) -> object:
    """What a stream call returns: the message with its call ids, or the refusal's reason."""
    try:
        message = action(*args)
    except reply.Rejected as refusal:
        return ("rejected", refusal.reason)
    return (message.reasoning_content, message.content, message.tool_calls)


def grammar_runs(reader: reply.Reader, action) -> int:
    """How many times `action()` ran the reader's grammar."""
    parse = reader.arena.parse
    count = 0

    def counted(ctx):
        nonlocal count
        count += 1
        return parse(ctx)

    reader.arena.parse = counted
    try:
        action()
    finally:
        reader.arena.parse = parse
    return count
