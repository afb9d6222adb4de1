"""llama-server's view of one chunking, derived from one oracle read of every prefix."""

from __future__ import annotations

from chatparity.model import Message, Reading, Rejection
from harness.server_view import EMPTY, ServerStream, server_final, server_stream
from oracle.partial_reads import PartialReads, Reads

A, AB = Message("a"), Message("ab")
UNION = (1, 2, 3)
SHOWN = {1: A, 2: A, 3: AB}


def shows(ends: tuple[int, ...], shown: dict[int, Reading], kept: frozenset[int]) -> list[Reading]:
    """Every snapshot llama-server shows at `ends`, from the union stream's reads `shown`."""
    return list(server_stream(ends, shown.items(), kept))


def test_the_union_stream_itself_shows_its_own_readings() -> None:
    assert shows(UNION, SHOWN, frozenset({2})) == [A, A, AB]


def test_a_stream_keeps_its_own_last_message_where_the_partial_parse_came_back_empty() -> None:
    assert shows((2, 3), SHOWN, frozenset({2})) == [EMPTY, AB]
    assert shows((1, 3), {1: EMPTY, 3: AB}, frozenset()) == [EMPTY, AB]


def test_an_unchanged_parse_keeps_its_message() -> None:
    assert shows((2, 3), SHOWN, frozenset()) == [A, AB]


def test_a_rejection_shows_and_keeps_the_earlier_message() -> None:
    shown = {1: A, 2: Rejection("bad"), 3: A}
    assert shows(UNION, shown, frozenset({3})) == [A, Rejection("bad"), A]


def test_the_final_read_keeps_the_last_message_when_the_finished_parse_is_empty() -> None:
    assert server_final([A, AB], EMPTY, partial=False) == AB
    assert server_final([A, AB], Message("abc"), partial=False) == Message("abc")
    assert server_final([A, AB], Message("abc"), partial=True) == AB


def test_a_stream_of_the_union_streams_reads_shows_the_same_each_time_it_is_read() -> None:
    union = Reads()
    for reading in SHOWN.values():
        union.append(reading)
    stream = ServerStream((2, 3), PartialReads(UNION, union), frozenset({2}))
    assert list(stream) == list(stream) == [EMPTY, AB]
