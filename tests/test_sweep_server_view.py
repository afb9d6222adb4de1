"""llama-server's view of one chunking, derived from one oracle read of every prefix."""

from __future__ import annotations

from chatparity.model import Message, Rejection
from harness.server_view import EMPTY, server_final, server_stream, states_before

A, AB = Message("a"), Message("ab")
UNION = (1, 2, 3)
SHOWN = {1: A, 2: A, 3: AB}


def fresh_from(reads: dict[int, Message]):
    asked: list[int] = []

    def fresh(end: int) -> Message:
        asked.append(end)
        return reads[end]

    return fresh, asked


def test_the_union_stream_itself_needs_no_extra_read() -> None:
    fresh, asked = fresh_from({})
    assert server_stream(UNION, SHOWN, states_before(UNION, SHOWN), fresh) == [A, A, AB]
    assert asked == []


def test_an_empty_parse_hidden_by_the_union_stream_is_asked_for() -> None:
    fresh, asked = fresh_from({2: EMPTY})
    assert server_stream((2, 3), SHOWN, states_before(UNION, SHOWN), fresh) == [EMPTY, AB]
    assert asked == [2]


def test_an_unchanged_parse_keeps_its_message() -> None:
    fresh, _ = fresh_from({2: A})
    assert server_stream((2, 3), SHOWN, states_before(UNION, SHOWN), fresh) == [A, AB]


def test_a_rejection_shows_and_keeps_the_earlier_message() -> None:
    shown = {1: A, 2: Rejection("bad"), 3: A}
    fresh, _ = fresh_from({3: EMPTY})
    assert server_stream(UNION, shown, states_before(UNION, shown), fresh) == [A, Rejection("bad"), A]


def test_the_final_read_keeps_the_last_message_when_the_finished_parse_is_empty() -> None:
    assert server_final([A, AB], EMPTY, partial=False) == AB
    assert server_final([A, AB], Message("abc"), partial=False) == Message("abc")
    assert server_final([A, AB], Message("abc"), partial=True) == AB
