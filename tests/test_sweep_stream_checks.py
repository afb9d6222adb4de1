"""Stream invariants: each check fails on the stream that breaks it, and says where."""

from __future__ import annotations

from chatparity.model import Message, Rejection, ToolCall
from harness.stream_checks import check_stream, leak

MARKERS = ("<tool_call>", "</think>")


def run(
    snapshots: list[Message],
    final: Message,
    whole: Message | None = None,
    partials: dict[int, Message] | None = None,
):
    ends = list(range(1, len(snapshots) + 1))
    return check_stream(
        snapshots,
        ends,
        final,
        whole if whole is not None else final,
        [partials[end] for end in ends] if partials is not None else snapshots,
        MARKERS,
    )


def test_a_growing_stream_holds_every_invariant() -> None:
    verdict = run([Message("H"), Message("Hi"), Message("Hi!")], Message("Hi!"))
    assert (
        verdict.consistent,
        verdict.monotonic,
        verdict.clean,
        verdict.snapshot_parity,
        verdict.detail,
    ) == (True, True, True, True, "")


def test_retracted_content_breaks_monotonic() -> None:
    verdict = run([Message("Hi"), Message("H"), Message("Hi!")], Message("Hi!"))
    assert not verdict.monotonic
    assert verdict.detail == "monotonic: content retracted @1: 'Hi' -> 'H' (after prefix 2)"


def test_shrinking_arguments_and_vanishing_calls_break_monotonic() -> None:
    call = ToolCall("f", '{"a": 1')
    assert not run(
        [Message(tool_calls=(call,)), Message(tool_calls=(ToolCall("f", '{"a"'),))],
        Message(tool_calls=(call,)),
    ).monotonic
    assert "vanished" in run([Message(tool_calls=(call,)), Message()], Message()).detail


def test_final_arguments_must_extend_the_streamed_ones() -> None:
    verdict = run(
        [Message(tool_calls=(ToolCall("f", '{"a": 12'),))], Message(tool_calls=(ToolCall("f", '{"a": 1}'),))
    )
    assert not verdict.monotonic and "at the final read" in verdict.detail


def test_a_marker_the_final_keeps_at_the_same_offset_is_text_not_a_leak() -> None:
    verdict = run(
        [Message(reasoning_content="x"), Message(reasoning_content="x</think>")],
        Message(reasoning_content="x</think>"),
    )
    assert (verdict.clean, verdict.monotonic) == (True, True)


def test_a_marker_streamed_where_the_final_lacks_it_is_unclean() -> None:
    verdict = run(
        [Message(reasoning_content="x</think>"), Message(reasoning_content="x</think> y")],
        Message(reasoning_content="x</thinking> y"),
        partials={1: Message(reasoning_content="x"), 2: Message(reasoning_content="x</thinking> y")},
    )
    assert (verdict.clean, verdict.clean_breaks, verdict.monotonic) == (False, 2, False)


def test_the_start_of_a_marker_the_final_reading_lacks_is_unclean() -> None:
    llama_shows_nothing = {1: Message(), 2: Message()}
    assert not run([Message("ok"), Message("ok<too")], Message("ok"), partials=llama_shows_nothing).clean
    assert run([Message("ok"), Message("ok<too")], Message("ok")).clean, "llama-server showed it: its leak"
    assert leak("ok<too", "ok", MARKERS) == "start of marker '<tool_call>' ('<too') @2"


def test_the_start_of_a_marker_the_final_reading_keeps_is_content() -> None:
    assert run([Message("a <"), Message("a < b")], Message("a < b")).clean


def test_stream_ending_elsewhere_than_the_whole_read_is_inconsistent() -> None:
    verdict = run([Message("a")], Message("a"), whole=Message("ab"))
    assert verdict.consistent is False and verdict.detail.startswith("consistent:")


def test_snapshot_parity_compares_with_the_oracle_partial_of_the_same_prefix() -> None:
    verdict = run([Message("a"), Message("ab")], Message("ab"), partials={1: Message(""), 2: Message("ab")})
    assert verdict.snapshot_parity is False
    assert verdict.detail == "snapshot_parity: after prefix 1: content @0: '' vs 'a'"


def test_rejected_snapshots_are_skipped_by_monotonic() -> None:
    assert run(
        [Message("a"), Rejection("x"), Message("ab")],
        Message("ab"),
        partials={1: Message("a"), 2: Rejection("y"), 3: Message("ab")},
    ).monotonic
