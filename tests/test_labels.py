"""Every difference gets one of three labels: a policy of the parser, a llama.cpp defect, or (no label) a bug."""

from __future__ import annotations

from dataclasses import dataclass

from chatparity.model import Message, Rejection, ToolCall
from harness.labels import (
    DEPARTS_FROM_TRUTH,
    DROPS_DECLARED_CALL,
    EMPTY_READ,
    RETRACTION,
    STALE_VIEW,
    StreamLabels,
    counts_of,
    counts_text,
    final_label,
    first_retraction,
    retractions,
    shown_last,
)
from harness.policies import Policies, Policy
from harness.policy_rules import Point, takes_back

EMPTY = Message()
HELD = Policies((Policy("holds", "held_arguments", "why", "README.md"),))


def call(arguments: str) -> Message:
    """A message holding one call to f."""
    return Message(tool_calls=(ToolCall("f", arguments),))


@dataclass
class History:
    """What llama.cpp's character stream showed: something before every prefix or not, and a view it later took
    back before every prefix (None: none)."""

    shown: bool = False
    peak: Message | None = None

    def shown_before(self, end: int) -> bool:
        return self.shown

    def taken_back_before(self, end: int, reading: Message) -> bool:
        return self.peak is not None and takes_back(self.peak, reading)


def labels(views: list[Message], fresh: dict[int, Message], history: History | None = None,
           policies: Policies | None = None) -> StreamLabels:
    """Labels of a stream whose llama-server views are `views` at prefixes 1, 2, …"""
    ends = list(range(1, len(views) + 1))
    kept = frozenset(end for end, reading in fresh.items() if reading == EMPTY)
    return StreamLabels("x" * len(views), ends, views, kept, history or History(), policies or Policies(), ())


def test_a_view_llama_server_kept_because_the_partial_parse_came_back_empty_is_stale() -> None:
    views = [call('{"a"'), call('{"a"')]
    stream = labels(views, {1: call('{"a"'), 2: EMPTY})
    assert stream.label(1, views[1], call('{"a": 1')) == STALE_VIEW
    assert stream.counts == {STALE_VIEW: 1}


def test_an_empty_partial_parse_before_anything_was_shown_is_no_defect() -> None:
    views = [EMPTY]
    assert labels(views, {1: EMPTY}).label(0, EMPTY, Message(content="x")) is None
    assert labels(views, {1: EMPTY}, History(shown=True)).label(0, EMPTY, Message(content="x")) == STALE_VIEW


def test_a_view_lacking_what_llama_cpps_character_stream_showed_before_it_took_it_back_is_a_retraction() -> None:
    views = [Message(content="<tool_call>f <a")]
    fresh = {1: views[0]}
    assert labels(views, fresh).label(0, views[0], call("{")) is None
    assert labels(views, fresh, History(peak=call('{"a"'))).label(0, views[0], call("{")) == RETRACTION


def test_a_view_that_takes_back_what_an_earlier_one_showed_is_a_retraction_until_it_grows_back() -> None:
    views = [call('{"a": 1'), Message(content="<tool_call>"), Message(content="<tool_call>f"), call('{"a": 1}')]
    assert retractions(views) == [False, True, True, False]
    stream = labels(views, {end: views[end - 1] for end in range(1, 5)})
    assert stream.label(2, views[2], call('{"a": 1')) == RETRACTION


def test_a_policy_comes_before_a_defect_and_a_bug_gets_no_label() -> None:
    views = [call('{"a": 1, "b'), call('{"a": 1, "b')]
    stream = labels(views, {1: views[0], 2: EMPTY}, policies=HELD)
    assert stream.label(1, views[1], call('{"a": 1')) == "holds"
    assert labels(views, {1: views[0], 2: views[1]}).label(1, views[1], call('{"b": 2')) is None


def test_a_stream_first_takes_back_at_the_prefix_that_lacks_what_it_showed() -> None:
    found = first_retraction([(3, call("{")), (5, call('{"a"')), (9, Message(content="x")), (12, call('{"a"'))])
    assert found == (9, call('{"a"'))
    assert first_retraction([(1, call("{")), (2, call('{"a"'))]) is None


def test_what_a_stream_showed_last_is_before_its_first_retraction() -> None:
    assert shown_last([call("{"), call('{"a"'), Message(content="text")]) == call('{"a"')
    assert shown_last([call("{"), call('{"a"')]) == call('{"a"')
    assert shown_last([call("{"), Rejection("off")]) is None


def test_a_whole_read_empty_after_the_stream_showed_something_is_llama_cpps_defect() -> None:
    point = Point("text", False, (), stream_end=call('{"a": 1'))
    assert final_label([EMPTY], call('{"a": 2}'), point, Policies(), lambda: False) == EMPTY_READ
    assert final_label([Message(content="x")], call('{"a": 2}'), point, Policies(), lambda: False) == RETRACTION
    assert final_label([call('{"a": 1}')], call('{"a": 2}'), point, Policies(), lambda: False) is None


def test_a_known_divergence_comes_after_the_policies_and_before_llama_cpps_defects() -> None:
    point = Point("text", False, (), stream_end=call('{"a": 1'))
    assert final_label([EMPTY], call('{"a": 2}'), point, Policies(), lambda: False, "my-entry") == "my-entry"


def test_a_reading_that_is_the_replys_truth_where_llama_cpps_is_not_is_llama_cpps_defect() -> None:
    point = Point("<|tool_call>call:get-weather{}<tool_call|>", False, ())
    meant = Message(tool_calls=(ToolCall("get-weather", "{}"),))
    assert final_label([EMPTY], meant, point, Policies(), lambda: False, truth=meant) == DEPARTS_FROM_TRUTH
    assert final_label([EMPTY], meant, point, Policies(), lambda: False) is None
    other = Message(tool_calls=(ToolCall("get_weather", "{}"),))
    assert final_label([EMPTY], other, point, Policies(), lambda: False, truth=meant) is None


def test_reading_nothing_of_a_finished_call_to_a_declared_tool_is_llama_cpps_defect() -> None:
    text = "<|tool_call>call:get-weather{}<tool_call|>"
    read = Message(tool_calls=(ToolCall("get-weather", "{}"),))
    declared = frozenset({"get-weather"})
    assert final_label([EMPTY], read, Point(text, False, ()), Policies(), lambda: False,
                       declared=declared) == DROPS_DECLARED_CALL
    assert final_label([EMPTY], read, Point(text, True, ()), Policies(), lambda: False, declared=declared) is None
    assert final_label([EMPTY], read, Point(text, False, ()), Policies(), lambda: False,
                       declared=frozenset({"get_weather"})) is None
    assert final_label([Message(content="x")], read, Point(text, False, ()), Policies(), lambda: False,
                       declared=declared) is None
    unwritten = Message(tool_calls=(ToolCall("get-weather", "{}"),))
    assert final_label([EMPTY], unwritten, Point("<|tool_call>{}", False, ()), Policies(), lambda: False,
                       declared=declared) is None


def test_a_stale_end_of_a_cut_reply_is_llama_cpps_defect() -> None:
    point = Point("text", True, ())
    assert final_label([call('{"a"')], call('{"b"'), point, Policies(), lambda: True) == STALE_VIEW


def test_label_counts_round_trip_most_first() -> None:
    text = counts_text({"b": 2, STALE_VIEW: 5, "a": 2})  # type: ignore[arg-type]
    assert text == "llama.cpp:stale_view=5,a=2,b=2"
    assert counts_of(text) == {STALE_VIEW: 5, "a": 2, "b": 2}
