"""Streams of the project parser without the oracle: they end where the whole parse ends, never retract,
never show a template marker, and read each character a bounded number of times (linear work)."""

from __future__ import annotations

import json

import pytest

import reply
from templates.index import load_index
from tests.reply_support import SYNTAX_TEMPLATES, mine, normal, replies, session, sessions

STREAMED = [names[0] for names in SYNTAX_TEMPLATES.values()]


def grows(before: reply.Message, after: reply.Message) -> str:
    """'' when `after` extends `before` (content, reasoning, calls and their arguments only grow)."""
    if not after.content.startswith(before.content):
        return "content retracted"
    if not after.reasoning_content.startswith(before.reasoning_content):
        return "reasoning retracted"
    if len(after.tool_calls) < len(before.tool_calls):
        return "a call vanished"
    for old, new in zip(before.tool_calls, after.tool_calls):
        if not new.name.startswith(old.name) or not new.arguments.startswith(old.arguments):
            return f"call {old.name} changed"
    return ""


@pytest.mark.parametrize("template", STREAMED)
def test_stream_ends_as_whole_parse_and_never_retracts(template: str) -> None:
    """Per-character and 3-character streams: monotonic snapshots, final reading equal to the whole parse."""
    for s in sessions(template)[:3]:
        reader = reply.open(s)
        for text, _ in replies(s):
            for size in (1, 3):
                stream = reader.stream()
                previous = reply.Message()
                for start in range(0, len(text), size):
                    snapshot = mine(stream.feed, text[start:start + size])
                    if isinstance(snapshot, reply.Rejected):
                        continue
                    broken = grows(previous, snapshot)
                    assert not broken, f"{template} {s.mode.label}: {broken} at {text[:start + size]!r}"
                    previous = snapshot
                final = normal(mine(stream.finish))
                assert final == normal(mine(reader.parse, text)), f"{template}: stream end != parse"


@pytest.mark.parametrize("template", STREAMED)
def test_no_marker_leaks_into_streamed_text(template: str) -> None:
    """A template marker (or the start of one) never shows in streamed content or reasoning unless the
    whole parse keeps it there too."""
    markers = [m for m in load_index()[template].markers if len(m) > 2]
    for s in sessions(template)[:2]:
        reader = reply.open(s)
        for text, _ in replies(s):
            final = mine(reader.parse, text)
            kept = "" if isinstance(final, reply.Rejected) else final.content + final.reasoning_content
            stream = reader.stream()
            for fed, char in enumerate(text, start=1):
                snapshot = mine(stream.feed, char)
                if isinstance(snapshot, reply.Rejected):
                    continue
                for shown in (snapshot.content, snapshot.reasoning_content):
                    for marker in markers:
                        for cut in range(2, len(marker) + 1):
                            if shown.endswith(marker[:cut]) and marker[:cut] not in kept:
                                pytest.fail(f"{template}: {marker[:cut]!r} leaked after {text[:fed][-40:]!r}")


def long_reply(size: int) -> str:
    """A hermes reply of about `size` characters: a thought, content, and two calls with long arguments."""
    words = ("word " * (size // 25))
    args = json.dumps({"city": "x" * (size // 10), "days": 4})
    event = json.dumps({"event": {"title": "t"}, "attendees": [f"a{i}" for i in range(size // 20)]})
    return (f"<think>{words}</think>{words}<tool_call>\n"
            f'{{"name": "get_weather", "arguments": {args}}}\n</tool_call>\n<tool_call>\n'
            f'{{"name": "create_event", "arguments": {event}}}\n</tool_call>')


def test_char_stream_reads_each_character_a_bounded_number_of_times() -> None:
    """The scanners' work over a per-character stream grows linearly: at most twice the reply's length,
    the same ratio at 4 KB and 16 KB (a rescan per chunk would make it grow with the length)."""
    reader = reply.open(session("Qwen-Qwen3-0.6B.jinja", "think/parallel"))
    ratios = []
    for size in (4000, 16000):
        text = long_reply(size)
        stream = reader.stream()
        for char in text:
            stream.feed(char)
        final = stream.finish()
        assert [c.name for c in final.tool_calls] == ["get_weather", "create_event"]
        ratios.append(stream.examined / len(text))
    assert all(ratio < 2 for ratio in ratios), ratios
    assert abs(ratios[1] - ratios[0]) < 0.25, ratios
