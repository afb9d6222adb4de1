"""The oracle's partial reads as the cache keeps them: each read written against the one before, read back whole."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatparity.model import Message, Reading, Rejection, ToolCall, reading_to_json
from corpora import catalog
from harness.oracle_cache import CACHE_FILE, OracleCache
from harness.oracle_reads import OracleIdentity, OracleReads
from oracle.partial_reads import Reads, decoded, encoded, same

texts = st.text(alphabet="ab{}\"é🌧 ", max_size=6)
problems = st.none() | st.tuples(st.sampled_from(["bad_syntax", "cut_off"]))
calls = st.builds(ToolCall, texts, texts, texts)
messages = st.builds(Message, texts, texts, st.lists(calls, max_size=3).map(tuple), problems)
readings = st.one_of(messages, st.builds(Rejection, texts, problems))


@st.composite
def grown_reads(draw: st.DrawFn) -> list[Reading]:
    """Reads as a stream makes them: mostly lengthening the read before, sometimes repeating or replacing it."""
    found = [draw(readings)]
    for _ in range(draw(st.integers(0, 12))):
        before = found[-1]
        step = draw(st.sampled_from(["repeat", "grow", "other"]))
        if step == "repeat":
            found.append(before)
        elif step == "grow" and isinstance(before, Message):
            found.append(Message(before.content + draw(texts), before.reasoning_content + draw(texts),
                                 before.tool_calls + draw(st.lists(calls, max_size=1).map(tuple))))
        else:
            found.append(draw(readings))
    return found


@settings(max_examples=300, deadline=None)
@given(grown_reads())
def test_reads_come_back_equal_problems_included_through_json(reads: list[Reading]) -> None:
    back = decoded(json.loads(json.dumps(encoded(reads), ensure_ascii=False)))
    assert len(back) == len(reads)
    assert all(same(first, second) for first, second in zip(reads, back)), (reads, back)
    assert all((back[i] is back[i - 1]) == same(reads[i], reads[i - 1]) for i in range(1, len(reads)))


def test_a_read_that_only_lengthens_the_one_before_writes_only_what_it_adds() -> None:
    reads = [Message("Il pleut" * 50), Message("Il pleut" * 50 + " à Rio")]
    assert encoded(reads)[1] == [[0, ""], [400, " à Rio"], []]
    assert encoded([Message(problems=("cut_off",)), Message()])[1] != 0


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ([0], "partial read 0 does not decode: ValueError: the first read refers to a read before it"),
        ([[[0, ""], [0, "ab"], []], [[0, ""], [3, "c"], []]],
         "partial read 1 does not decode: ValueError: \\[3, 'c'\\] does not grow a text of 2 code points"),
        ([[[0, ""], [0, "ab"]]], "partial read 0 does not decode: ValueError: .* is neither a rejection nor a message"),
        ([{"content": "ab"}], "partial read 0 does not decode: ValueError: {'content': 'ab'} is neither"),
    ],
)
def test_a_damaged_entry_is_refused_naming_the_read(written: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decoded(written)


def test_the_cache_keeps_a_char_stream_at_a_fraction_of_its_reads_and_gives_llama_cpps_reads_back(
    tmp_path: Path,
) -> None:
    planned = next(p for p in catalog.plan("quick", templates="Qwen-Qwen3-0.6B.jinja", mode="think/auto"))
    reply = max(catalog.replies(planned, "quick"), key=lambda found: len(found.text))
    ends = list(range(1, len(reply.text) + 1))
    reads = OracleReads(OracleIdentity.of(), OracleCache(tmp_path))
    first = dict(reads.session(planned.session).partials(reply.text, ends).items())
    asked = reads.requests
    again = dict(reads.session(planned.session).partials(reply.text, ends).items())
    direct = reads.ask("stream", reads.session(planned.session).ensure_handle(), reply.text, ends).partials
    reads.close()
    assert asked >= 1 and reads.requests == asked + 2
    assert list(first) == list(again) == ends
    assert all(same(first[end], read) and same(again[end], read) for end, read in zip(ends, direct))
    stored = sqlite3.connect(tmp_path / CACHE_FILE).execute("SELECT value FROM answers").fetchall()
    kept = max(len(zlib.decompress(value)) for (value,) in stored)
    listed = len(json.dumps([reading_to_json(read) for read in direct], ensure_ascii=False).encode())
    assert len(reply.text) > 150 and kept * 5 < listed, (kept, listed)


@settings(max_examples=200, deadline=None)
@given(grown_reads())
def test_reads_kept_one_at_a_time_come_back_equal_each_time_they_are_read(reads: list[Reading]) -> None:
    kept = Reads()
    for reading in reads:
        kept.append(reading)
    assert len(kept) == len(reads) and kept.last is reads[-1]
    for _ in range(2):
        back = list(kept)
        assert all(same(first, second) for first, second in zip(reads, back, strict=True)), (reads, back)


def test_a_character_streams_reads_keep_about_its_length_of_text() -> None:
    text = "<think>" + "é" * 500 + "</think>" + "word " * 500
    kept = Reads()
    for end in range(1, len(text) + 1):
        kept.append(Message(content=text[:end]))
    added = sum(len(entry[1][1]) for entry in kept.written)
    assert added == len(text)
    assert [reading.content for reading in kept][-1] == text


def test_reads_written_elsewhere_are_checked_when_taken() -> None:
    assert list(Reads.of_written(encoded([Message("a"), Message("ab")]))) == [Message("a"), Message("ab")]
    with pytest.raises(ValueError, match="partial read 1 does not decode"):
        Reads.of_written([[[0, ""], [0, "ab"], []], [[0, ""], [3, "c"], []]])
