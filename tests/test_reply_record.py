"""A reader's record of a reply (`reply.reader.Record`): every stream of one reply reads it, whatever its chunks,
so the reply is parsed once; streams of other replies fork it or start their own, and an interrupted read
leaves it as good as new."""

from __future__ import annotations

from functools import partial

import pytest

import reply
from reply.reader import Reading
from tests.reply_support import grammar_runs, outcome, session, written_turn

TEMPLATE = "Qwen-Qwen3-0.6B.jinja"
MODE = "think/parallel"


def streamed(reader: reply.Reader, chunks: list[str]) -> list[object]:
    """Every snapshot of a stream fed `chunks`, then its finish."""
    stream = reader.stream()
    return [*(outcome(stream.feed, chunk) for chunk in chunks), outcome(stream.finish)]


def chunked(text: str, size: int) -> list[str]:
    """`text` in chunks of `size` characters."""
    return [text[start:start + size] for start in range(0, len(text), size)]


@pytest.fixture(scope="module")
def turn() -> str:
    """A turn of the template with reasoning, content and two calls."""
    s = session(TEMPLATE, MODE)
    text = written_turn(s, [("get_weather", {"city": "Rio de Janeiro", "days": 4}), ("get_time", {})],
                        content="Let me check the weather and the time.", reasoning="I should look both up.")
    assert text
    return text


def test_every_chunking_of_a_reply_after_its_first_stream_reads_without_parsing(turn: str) -> None:
    """Once one stream of a reply ran, streams of it in 2, 3 and 7 characters, and split in two anywhere,
    run the grammar not at all, and show what a fresh reader shows."""
    reader = reply.open(session(TEMPLATE, MODE))
    assert grammar_runs(reader, lambda: streamed(reader, list(turn))) > 0
    chunkings = [chunked(turn, size) for size in (2, 3, 7)]
    chunkings += [[turn[:cut], turn[cut:]] for cut in range(1, len(turn), 5)]
    for chunks in chunkings:
        found: list[object] = []
        assert grammar_runs(reader, partial(lambda into, fed: into.extend(streamed(reader, fed)), found, chunks)) == 0
        assert found == streamed(reply.open(session(TEMPLATE, MODE)), chunks)


def test_streams_of_two_replies_fed_in_turns_read_as_fresh_readers_read_them(turn: str) -> None:
    """Two streams on one reader, fed in turns, replies that share a start and then differ: each shows what a
    stream on a reader of its own shows."""
    other = turn[:len(turn) // 2] + "and then something else entirely."
    reader = reply.open(session(TEMPLATE, MODE))
    first, second = reader.stream(), reader.stream()
    shown: tuple[list[object], list[object]] = ([], [])
    for a, b in zip(chunked(turn, 3), chunked(other, 2)):
        shown[0].append(outcome(first.feed, a))
        shown[1].append(outcome(second.feed, b))
    count = min(len(chunked(turn, 3)), len(chunked(other, 2)))
    alone = [streamed(reply.open(session(TEMPLATE, MODE)), chunks[:count])[:-1]
             for chunks in (chunked(turn, 3), chunked(other, 2))]
    assert list(shown) == alone


class Interrupt(BaseException):
    """Stands for a timeout's alarm raised in the middle of a read."""


@pytest.mark.parametrize("lengthening", [True, False], ids=["lengthening", "parsing"])
def test_a_read_interrupted_mid_character_leaves_the_record_as_good_as_new(turn: str, lengthening: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream interrupted while the record reads a character (the harness's timeout alarm), one that
    lengthens an open span without parsing or one that parses: the next streams of the reply, on the same
    reader, show what a fresh reader's streams show."""
    reader = reply.open(session(TEMPLATE, MODE))
    grow = Reading.grow
    calls = 0

    def interrupted(self: Reading, chunk: str):
        nonlocal calls
        takes = self.growth is not None and self.growth.takes(chunk)
        read = grow(self, chunk)
        calls += takes == lengthening
        if calls == 5:
            raise Interrupt()
        return read

    monkeypatch.setattr(Reading, "grow", interrupted)
    with pytest.raises(Interrupt):
        streamed(reader, list(turn))
    monkeypatch.setattr(Reading, "grow", grow)
    fresh = reply.open(session(TEMPLATE, MODE))
    for chunks in (list(turn), chunked(turn, 4)):
        assert streamed(reader, chunks) == streamed(fresh, chunks)
