"""Compare the project parser with the oracle on one template: the catalog corpus and hand-written replies,
read whole (finished and cut off) and fed one character at a time."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import reply
from corpora import catalog
from harness.readings import Message, Rejection
from reply.reader import extends, hold_back


def reading(read: Any) -> tuple:
    """A reading for comparison: rejection, or reasoning, content and calls (arguments as parsed JSON, id)."""
    if isinstance(read, (Rejection, reply.Rejected)):
        return ("rejected",)
    calls = []
    for call in read.tool_calls:
        try:
            arguments = json.dumps(json.loads(call.arguments), sort_keys=True)
        except ValueError:
            arguments = "raw:" + call.arguments
        calls.append((call.name, arguments, call.id))
    return (read.reasoning_content, read.content, tuple(calls))


def mine(action: Any, *args: Any, **kwargs: Any) -> tuple:
    """The project parser's reading by one call (a message, or its refusal)."""
    try:
        return reading(action(*args, **kwargs))
    except reply.Rejected as refusal:
        return reading(refusal)


def _held(read: Message, reader: Any, text: str) -> reply.Message:
    return hold_back(reply.Message(read.reasoning_content, read.content, tuple(read.tool_calls)),
                     reader.prefix + text, reader.markers)


def shown(oracle: Any, handle: int, reader: Any, text: str, partial: bool) -> Any:
    """llama.cpp's reading of a reply as the parser shows it: finished, the oracle's read; cut off, its read
    with a marker still arriving held back; where either shows nothing, what llama.cpp's partial reads of
    each prefix last showed (each held back, kept only when it adds to the one shown before)."""
    read = oracle.parse(handle, text, partial=partial)
    if not isinstance(read, Message):
        return read
    held = _held(read, reader, text) if partial else read
    if reading(held) != reading(reply.Message()) or not text:
        return held
    last = reply.Message()
    for cut in range(1, len(text) + 1):
        step = oracle.parse(handle, text[:cut], partial=True)
        if isinstance(step, Message):
            fresh = _held(step, reader, text[:cut])
            if not fresh.empty and extends(last, fresh):
                last = fresh
    return last


@dataclass
class Tally:
    """Replies compared and the differences found (each a short description)."""

    whole: int = 0
    streamed: int = 0
    with_calls: int = 0
    differences: list[str] = field(default_factory=list)


def compare(oracle: Any, template: str, extra: tuple[str, ...], syntax: str, stream_every: int = 4,
            modes: tuple[str, ...] = ("*",)) -> Tally:
    """Every quick-profile session of the template: each corpus reply and each extra reply whole, every
    `stream_every`-th finished one (and the extra ones in every third session) streamed per character;
    then the same sessions with reasoning_format none, whole only."""
    tally = Tally()
    planned = [p for mode in modes for p in catalog.plan("quick", templates=template, mode=mode)]
    assert planned, f"no sessions for {template}"
    runs = [(plan, plan.session, True) for plan in planned]
    runs += [(plan, dataclasses.replace(plan.session, reasoning_format="none"), False) for plan in planned]
    for number, (plan, session, streamed) in enumerate(runs):
        reader = reply.open(session)
        assert reader.syntax.name == syntax, f"{template}: read as {reader.syntax.name}"
        handle = oracle.render(session.render_request()).handle
        corpus = [(r.text, r.partial) for r in catalog.replies(plan, "quick")]
        cases = corpus + [(text, False) for text in extra] + [(text[:cut], True) for text in extra
                                                               for cut in (len(text) // 2, len(text) - 2)]
        for index, (text, partial) in enumerate(cases):
            expected = reading(shown(oracle, handle, reader, text, partial))
            got = mine(reader.parse, text, partial=partial)
            tally.whole += 1
            tally.with_calls += expected != ("rejected",) and bool(expected[2])
            if got != expected:
                tally.differences.append(f"{session.mode.label} {session.reasoning_format} partial={partial} "
                                         f"{text!r}: {got} != {expected}")
            is_extra = index >= len(corpus)
            sampled = index % stream_every == 0 or (is_extra and number % 3 == 0)
            if not streamed or partial or not text or not sampled:
                continue
            tally.differences += _stream(oracle, handle, reader, text, session.mode.label)
            tally.streamed += 1
    return tally


def behind(got: tuple, expected: tuple) -> bool:
    """Whether a snapshot shows no more than llama.cpp's partial read: its texts, call names and arguments
    are prefixes of the oracle's (a stream holds back a marker that is still arriving)."""
    if got == expected or expected == ("rejected",):
        return True
    if got == ("rejected",) or len(got[2]) > len(expected[2]):
        return False
    return (expected[0].startswith(got[0]) and expected[1].startswith(got[1])
            and all(new[0].startswith(old[0]) for old, new in zip(got[2], expected[2])))


def _stream(oracle: Any, handle: int, reader: Any, text: str, label: str) -> list[str]:
    """Per-character snapshots never retract and never run ahead of llama.cpp's partial reads; the finish and
    the whole parse equal llama.cpp's whole read, or the last snapshot where that read is empty (as
    llama-server keeps its last message)."""
    expected = oracle.stream(handle, text, list(range(1, len(text) + 1)))
    stream = reader.stream()
    previous = reading(reply.Message())
    for cut, char in enumerate(text, start=1):
        got = mine(stream.feed, char)
        oracle_partial = reading(expected.partials[cut - 1])
        if got != previous and not behind(got, oracle_partial):
            return [f"{label} stream {text!r} after {text[:cut]!r}: {got} ahead of {oracle_partial}"]
        if not behind(previous, got):
            return [f"{label} stream {text!r} after {text[:cut]!r}: {got} retracts {previous}"]
        previous = got
    whole = reading(oracle.parse(handle, text))
    end = previous if whole == reading(reply.Message()) else whole
    finished, parsed = mine(stream.finish), mine(reader.parse, text)
    if finished != end or parsed != end:
        return [f"{label} stream {text!r} finished: {finished}, whole {parsed} != {end}"]
    return []
