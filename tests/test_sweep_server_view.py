"""llama-server's view of one chunking, derived from one oracle read of every prefix."""

from __future__ import annotations

from chatparity.model import Message, Rejection
from harness.server_view import EMPTY, server_final, server_stream

A, AB = Message("a"), Message("ab")
UNION = (1, 2, 3)
SHOWN = {1: A, 2: A, 3: AB}


def test_the_union_stream_itself_shows_its_own_readings() -> None:
    assert server_stream(UNION, SHOWN, frozenset({2})) == [A, A, AB]


def test_a_stream_keeps_its_own_last_message_where_the_partial_parse_came_back_empty() -> None:
    assert server_stream((2, 3), SHOWN, frozenset({2})) == [EMPTY, AB]
    assert server_stream((1, 3), {1: EMPTY, 3: AB}, frozenset()) == [EMPTY, AB]


def test_an_unchanged_parse_keeps_its_message() -> None:
    assert server_stream((2, 3), SHOWN, frozenset()) == [A, AB]


def test_a_rejection_shows_and_keeps_the_earlier_message() -> None:
    shown = {1: A, 2: Rejection("bad"), 3: A}
    assert server_stream(UNION, shown, frozenset({3})) == [A, Rejection("bad"), A]


def test_the_final_read_keeps_the_last_message_when_the_finished_parse_is_empty() -> None:
    assert server_final([A, AB], EMPTY, partial=False) == AB
    assert server_final([A, AB], Message("abc"), partial=False) == Message("abc")
    assert server_final([A, AB], Message("abc"), partial=True) == AB
