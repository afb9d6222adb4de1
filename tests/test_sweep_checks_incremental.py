"""The stream checks read each snapshot only past what the one before showed, and still find every break."""

from __future__ import annotations

from chatparity.model import Message, Rejection, ToolCall
from harness.compare import compare
from harness.stream_checks import clean_breaks

MARKERS = ("<tool_call>",)


def test_a_marker_completed_across_snapshots_is_found_where_it_starts() -> None:
    snapshots = [Message(content="ab<tool_"), Message(content="ab<tool_call> x")]
    found = clean_breaks(snapshots, [8, 15], Message(content="ab<tool_cat"), MARKERS)
    assert found.first == "clean: content shows marker '<tool_call>' @2 (after prefix 15)"
    assert found.count == 1


def test_a_marker_after_a_retraction_is_found_from_the_start() -> None:
    snapshots = [Message(content="abcdefgh"), Message(content="<tool_call>")]
    found = clean_breaks(snapshots, [8, 11], Message(content="x<tool_call>"), MARKERS)
    assert found.first == "clean: content shows marker '<tool_call>' @0 (after prefix 11)"


def test_a_marker_the_end_reading_holds_at_the_same_offset_is_content_not_a_leak() -> None:
    snapshots = [Message(content="Use `<tool"), Message(content="Use `<tool_call>` to")]
    found = clean_breaks(snapshots, [10, 20], Message(content="Use `<tool_call>` to call."), MARKERS)
    assert found.count == 0


def test_a_rejected_end_is_judged_against_the_last_message_shown() -> None:
    snapshots = [Message(content="a<tool_call>"), Rejection("off format")]
    found = clean_breaks(snapshots, [12, 13], Rejection("off format"), MARKERS)
    assert found.count == 0


def test_a_snapshot_equal_to_llama_servers_shows_llama_cpps_leak_not_the_parsers() -> None:
    snapshots = [Message(content="<th"), Message(content="Hi")]
    views = [Message(content="<th"), Message(content="Hi")]
    assert clean_breaks(snapshots, [3, 5], Message(content="Hi"), ("<think>",), views).count == 0
    assert clean_breaks(snapshots, [3, 5], Message(content="Hi"), ("<think>",)).count == 1


def test_a_repeated_snapshot_after_another_is_checked_again_only_for_what_is_new() -> None:
    snapshots = [Message(content="a<tool_call>"), Message(reasoning_content="r", content="a<tool_call>")]
    found = clean_breaks(snapshots, [12, 13], Message(content="a"), MARKERS)
    assert found.first == "clean: content shows marker '<tool_call>' @1 (after prefix 12)"
    assert found.count == 1


def test_every_snapshot_showing_a_new_marker_is_counted_and_the_first_described() -> None:
    snapshots = [Message(content="a<tool_call>"), Message(content="a<tool_call>b"), Message(content="a<tool")]
    found = clean_breaks(snapshots, [12, 13, 14], Message(content="a"), MARKERS)
    assert found.first == "clean: content shows marker '<tool_call>' @1 (after prefix 12)"
    assert found.count == 2


def test_equal_readings_agree_and_unequal_arguments_still_differ() -> None:
    call = ToolCall("f", '{"a": 1}', "")
    assert compare(Message(tool_calls=(call,)), Message(tool_calls=(call,))) is None
    found = compare(Message(tool_calls=(call,)), Message(tool_calls=(ToolCall("f", '{"a": 2}', ""),)))
    assert found is not None and found.detail == "tool_calls[0].arguments.a: 1 vs 2"
