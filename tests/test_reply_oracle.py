"""The project parser against llama.cpp (the oracle) on real templates: whole parses of every template of
every implemented syntax, and per-character streams (each snapshot equal to llama.cpp's partial read)."""

from __future__ import annotations

import pytest

import reply
from harness.readings import Message as Reading
from reply.reader import extends, hold_back
from tests.reply_support import SYNTAX_TEMPLATES, mine, normal, replies, sessions

pytestmark = pytest.mark.oracle

ALL = [(syntax, name) for syntax, names in SYNTAX_TEMPLATES.items() for name in names]
STREAMED = [(syntax, names[0]) for syntax, names in SYNTAX_TEMPLATES.items()]


def shown_by_llama_cpp(oracle, handle: int, text: str, markers: tuple[str, ...], prefix: str) -> reply.Message:
    """What llama-server shows after streaming `text` character by character, a marker still arriving held
    back and never retracting (the reading of a cut-off reply)."""
    expected = oracle.stream(handle, text, list(range(1, len(text) + 1)))
    want = reply.Message()
    for cut, read in enumerate(expected.partials, start=1):
        want = expected_snapshot(want, read, prefix + text[:cut], markers)
    return want


@pytest.mark.parametrize("syntax,template", ALL)
def test_whole_parse_matches_oracle(oracle, syntax: str, template: str) -> None:
    """Every finished reply reads as llama.cpp reads it; a cut-off reply reads as llama-server shows it
    after streaming it (a marker still arriving held back)."""
    checked = 0
    for session in sessions(template):
        reader = reply.open(session)
        assert reader.syntax.name == syntax
        handle = oracle.render(session.render_request()).handle
        for text, partial in replies(session):
            if partial:
                expected = normal(shown_by_llama_cpp(oracle, handle, text, reader.markers, reader.prefix))
            else:
                expected = normal(oracle.parse(handle, text))
            got = normal(mine(reader.parse, text, partial=partial))
            assert got == expected, f"{template} {session.mode.label} partial={partial} reply={text!r}"
            checked += 1
    assert checked > 100


def expected_snapshot(previous: reply.Message, oracle_read: object, text: str, markers: tuple[str, ...]) -> reply.Message:
    """llama.cpp's partial read with a marker still arriving held back, kept only when it extends the last."""
    if not isinstance(oracle_read, Reading):
        return previous
    read = reply.Message(oracle_read.reasoning_content, oracle_read.content,
                         tuple(reply.ToolCall(c.name, c.arguments, c.id) for c in oracle_read.tool_calls))
    held = hold_back(read, text, markers)
    return held if extends(previous, held) else previous


@pytest.mark.parametrize("syntax,template", STREAMED)
def test_char_stream_matches_oracle(oracle, syntax: str, template: str) -> None:
    """Fed one character at a time, every snapshot is llama.cpp's partial read (a marker still arriving
    held back, never retracting) and the end is its finished read."""
    for session in sessions(template)[:3]:
        reader = reply.open(session)
        handle = oracle.render(session.render_request()).handle
        for text, partial in replies(session):
            if partial or not text:
                continue
            expected = oracle.stream(handle, text, list(range(1, len(text) + 1)))
            stream = reader.stream()
            want = reply.Message()
            for cut, char in enumerate(text, start=1):
                got = mine(stream.feed, char)
                want = expected_snapshot(want, expected.partials[cut - 1], reader.prefix + text[:cut], reader.markers)
                assert normal(got) == normal(want), f"{template} {session.mode.label} after {text[:cut]!r}"
            assert normal(mine(stream.finish)) == normal(expected.final), f"{template} finished {text!r}"
