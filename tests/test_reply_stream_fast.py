"""A stream's fast path (a read lengthened without parsing where the parse proves only an open span grows,
`reply.growth`) shows byte for byte what parsing every feed shows: on every syntax's own replies, long replies
and generated ones, in several chunkings. REPLY_FAST_EXAMPLES sets the generated replies per syntax."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reply
from reply.reader import Stream
from reply.syntaxes import Syntax
from templates.index import load_index
from tests.reply_support import SYNTAX_TEMPLATES, grammar_runs, outcome, replies, sessions, written_turn

EXAMPLES = int(os.environ.get("REPLY_FAST_EXAMPLES", "12"))
TEMPLATES = [names[0] for names in SYNTAX_TEMPLATES.values()]
DEFAULT_MAPPER = Syntax.__dataclass_fields__["mapper"].default
FRAGMENTS = ['{"name": "get_weather", "arguments": ', '{"city": "Rio", "days": 4}', '{"city": ', '"Rio"', "4",
             "three", "[", "]", "{", "}", '"', ",", ":", "\\", "\n", " ", "Hello world", "get_weather", "city",
             "true", "null", "=", ">", "<", "</", "\n\n", "functions.", "a long run of plain words "]


def parsing(session) -> reply.Reader:
    """A reader of the session whose streams parse every feed and replay on their own (not `fast`)."""
    reader = reply.open(session)
    reader.fast = False
    return reader


def both_ways(reader: reply.Reader, slow_reader: reply.Reader, text: str,
              size: int) -> tuple[list[object], list[object], int]:
    """Every snapshot and the finish of a fast and of a parsing stream fed `size` characters at a time, then
    both readers' whole and cut parses of `text`, and how many feeds ended where the fast stream's record
    lengthened the last read without parsing."""
    fast, slow = Stream(reader), Stream(slow_reader)
    shown: tuple[list[object], list[object]] = ([], [])
    taken = 0
    for start in range(0, len(text), size):
        chunk = text[start:start + size]
        shown[0].append(outcome(fast.feed, chunk))
        shown[1].append(outcome(slow.feed, chunk))
        taken += fast.refusal is None and fast.record.grew(fast.size)
    shown[0].append(outcome(fast.finish))
    shown[1].append(outcome(slow.finish))
    for partial in (False, True):
        shown[0].append(outcome(reader.parse, text, partial))
        shown[1].append(outcome(slow_reader.parse, text, partial))
    return shown[0], shown[1], taken


def long_replies(s) -> list[str]:
    """The template's own call turns with long reasoning, content and arguments (a long string, a long list,
    an object and a list of the tool's schema)."""
    big = {"city": "Rio de Janeiro " * 40, "days": 4, "notes": ["a note", "b"] * 20}
    event = {"event": {"title": "Lunch 'at' None", "place": {"city": "Oslo", "room": 3}},
             "attendees": [f"a{i:03d} True" for i in range(40)]}
    turns = [written_turn(s, [("get_weather", big)], content="Let me check the weather. " * 20,
                          reasoning="I should look it up first. " * 20),
             written_turn(s, [("run_code", {"language": "python", "code": "print('hi')\n" * 30})]),
             written_turn(s, [("create_event", event)])]
    return [turn for turn in turns if turn]


@pytest.mark.parametrize("template", TEMPLATES)
def test_fast_stream_shows_what_parsing_every_feed_shows(template: str) -> None:
    """Own replies (whole and cut) and long replies, fed 1, 2 and 7 characters at a time; the fast path runs
    wherever the syntax maps with llama.cpp's common mapper (the ones with their own mappers never take it)."""
    taken = 0
    for s in sessions(template)[:3]:
        reader, slow_reader = reply.open(s), parsing(s)
        texts = [text for text, _ in replies(s)] + long_replies(s)
        for text in texts:
            for size in (1, 2, 7):
                fast, slow, count = both_ways(reader, slow_reader, text, size)
                taken += count
                for index, (mine, parsed) in enumerate(zip(fast, slow)):
                    assert mine == parsed, f"{template} {s.mode.label}: feed {index} of {size}: {text!r}"
    if reader.syntax.mapper is DEFAULT_MAPPER:
        assert taken > 0, f"{template}: no feed took the fast path"


@pytest.mark.parametrize("template", TEMPLATES)
def test_fast_stream_matches_on_generated_replies(template: str) -> None:
    """Replies made of the syntax's own markers, JSON and prose, in random chunks."""
    reader, slow_reader = reply.open(sessions(template)[0]), parsing(sessions(template)[0])
    starts = reader.syntax.call_starts(reader.template, reader.request)
    own = [*reader.markers, *starts, *load_index()[template].markers]
    pieces = tuple(dict.fromkeys([piece for piece in own if piece] + FRAGMENTS))

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(parts=st.lists(st.sampled_from(pieces), max_size=16), size=st.integers(1, 5))
    def check(parts: list[str], size: int) -> None:
        text = "".join(parts)
        fast, slow, _ = both_ways(reader, slow_reader, text, size)
        assert fast == slow, json.dumps(text)

    check()


def reads(reader: reply.Reader, text: str) -> int:
    """How many times a character-by-character stream of `text` ran the grammar."""
    stream = Stream(reader)
    return grammar_runs(reader, lambda: [stream.feed(char) for char in text])


@pytest.mark.parametrize("template", ["Qwen3-Coder.jinja", "GLM-4.6.jinja", "deepseek-ai-DeepSeek-V3.2.jinja",
                                      "Qwen-Qwen3-0.6B.jinja"])
def test_long_arguments_stream_without_parsing(template: str) -> None:
    """Inside a long string argument and a long JSON list argument (tagged XML parameters, or a JSON call)
    a feed lengthens the read without running the grammar: only the feeds around the markup parse."""
    s = next(s for s in sessions(template) if s.mode.label == "think/parallel")
    reader = reply.open(s)
    attendees = [f"attendee number {i:04d}" for i in range(150)]
    text = written_turn(s, [("get_weather", {"city": "Rio de Janeiro " * 200}),
                            ("create_event", {"event": {"title": "t"}, "attendees": attendees})])
    assert text and len(text) > 6000
    markup = len(text) - len("Rio de Janeiro " * 200) - len(json.dumps(attendees))
    assert reads(reader, text) < markup, f"{template}: the long arguments were parsed feed by feed"


def test_a_long_quoted_string_of_a_python_call_streams_without_parsing() -> None:
    """Inside a long quoted string argument of a Python-style call (LFM2.5) a feed lengthens the read without
    running the grammar: only the feeds around the markup parse."""
    s = next(s for s in sessions("LFM2.5-8B-A1B.jinja") if s.mode.label == "think/parallel")
    reader = reply.open(s)
    city = "Rio de Janeiro " * 200
    text = written_turn(s, [("get_weather", {"city": city, "days": 4})])
    assert text and city in text
    assert reads(reader, text) < len(text) - len(city), "the long string was parsed feed by feed"


@pytest.mark.parametrize("template", ["google-gemma-4-31B-it.jinja", "GLM-4.6.jinja", "Kimi-K2-Instruct.jinja",
                                      "MiniMax-M3.jinja", "inclusionai-ling-3.0-flash.jinja"])
def test_markers_names_and_values_arriving_stream_without_parsing(template: str) -> None:
    """While a marker, a tool name, a key or a short value arrives (a literal, a run of characters or a scan
    the parse waits on, `growth.Stall`), a feed moves the last parse on without running the grammar, custom
    mappers too: only the feeds where a token ends parse."""
    s = next(s for s in sessions(template) if s.mode.label == "think/parallel")
    reader = reply.open(s)
    text = written_turn(s, [("get_weather", {"city": "Rio de Janeiro", "days": 4}), ("get_time", {})],
                        content="Let me check.")
    assert text
    assert reads(reader, text) < len(text) / 3, f"{template}: most feeds ran the grammar"


def test_a_reply_sharing_a_start_with_the_last_replayed_one_replays_past_it() -> None:
    """Two broken calls that differ only at their end (a quoted integer, a missing brace) both replay; the
    second reuses what the first replay showed over their shared start, parses less, and reads as a fresh
    reader reads it."""
    s = next(s for s in sessions("google-gemma-4-31B-it.jinja") if s.mode.label == "think/auto")
    start = '<|tool_call>call:get_weather{city:<|"|>Rio<|"|>,days:'
    first, second = start + '"4"}<tool_call|>', start + "4<tool_call|>"
    expected, alone = reply.open(s).parse(second), reads_whole(reply.open(s), second)
    reader = reply.open(s)
    reader.parse(first)
    assert reads_whole(reader, second) < alone / 2
    assert reader.parse(second) == expected and expected.tool_calls[0].arguments == '{"city":"Rio"}'


def reads_whole(reader: reply.Reader, text: str) -> int:
    """How many times a whole parse of `text` ran the grammar (its replay included)."""
    return grammar_runs(reader, lambda: reader.parse(text))


@pytest.mark.parametrize("mode", ["nothink/auto", "think/parallel"])
def test_spaces_after_a_key_do_not_show_the_value_waiting_after_them(mode: str) -> None:
    """Gemma 4 keys followed by spaces stream as parsing every feed does: the value the spaces lead to is not
    shown begun (an empty string) while only spaces have arrived."""
    s = next(s for s in sessions("google-gemma-4-31B-it.jinja") if s.mode.label == mode)
    text = '<|tool_call>call:get_weather{city: <|"|>Rio<|"|>,days:  4 }<tool_call|>'
    for size in (1, 2):
        fast, slow, _ = both_ways(reply.open(s), parsing(s), text, size)
        assert fast == slow, size
