"""Comparing readings: the kind of the first difference, its field path and its offset."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chatparity.model import Kind, Message, Rejection, ToolCall
from harness.compare import agrees, arguments_agree, arguments_difference, compare, first_difference, verdict

RIO = ToolCall("get_weather", '{"city": "Rio", "days": 4}')
PARIS = ToolCall("get_weather", '{"city": "Paris"}')


def test_equal_readings_and_two_rejections_agree() -> None:
    assert compare(Message("a", "b", (RIO,)), Message("a", "b", (RIO,))) is None
    assert compare(Rejection("x"), Rejection("y")) is None


def test_rejections_on_one_side_are_rejects_or_accepts() -> None:
    assert compare(Message("a"), Rejection("no")).kind is Kind.REJECTS
    assert compare(Rejection("no"), Message("a")).kind is Kind.ACCEPTS


def test_content_difference_names_the_offset() -> None:
    found = compare(Message("Hello world"), Message("Hello"))
    assert found.kind is Kind.CONTENT
    assert found.detail == "content @5: 'Hello world' vs 'Hello'"


def test_reasoning_difference() -> None:
    found = compare(Message("x", "think"), Message("x", "thunk"))
    assert (found.kind, found.detail) == (Kind.REASONING, "reasoning_content @2: 'think' vs 'thunk'")


def test_arguments_compare_as_parsed_json() -> None:
    spaced = ToolCall("get_weather", '{ "days":4,"city":"Rio" }')
    assert compare(Message(tool_calls=(RIO,)), Message(tool_calls=(spaced,))) is None


def test_argument_difference_names_the_path_inside_the_json() -> None:
    cut = ToolCall("get_weather", '{"city": "Ri", "days": 4}')
    found = compare(Message(tool_calls=(PARIS, RIO)), Message(tool_calls=(PARIS, cut)))
    assert found.kind is Kind.CALLS
    assert found.detail == "tool_calls[1].arguments.city @2: 'Rio' vs 'Ri'"


def test_argument_values_keys_and_text() -> None:
    number = ToolCall("get_weather", '{"city": "Rio", "days": "4"}')
    assert (
        compare(Message(tool_calls=(RIO,)), Message(tool_calls=(number,))).detail
        == 'tool_calls[0].arguments.days: 4 vs "4"'
    )
    missing = ToolCall("get_weather", '{"city": "Rio"}')
    assert (
        compare(Message(tool_calls=(RIO,)), Message(tool_calls=(missing,))).detail
        == "tool_calls[0].arguments.days: missing (expected 4)"
    )
    broken = ToolCall("get_weather", '{"city": "Rio", "da')
    assert compare(Message(tool_calls=(RIO,)), Message(tool_calls=(broken,))).detail.startswith(
        "tool_calls[0].arguments @19 (as text):"
    )


def test_calls_by_position_and_count() -> None:
    assert compare(Message(tool_calls=(RIO, PARIS)), Message(tool_calls=(PARIS, RIO))).detail.startswith(
        "tool_calls[0].arguments.city @0:"
    )
    assert (
        compare(Message(tool_calls=(RIO, PARIS)), Message(tool_calls=(RIO,))).detail
        == """tool_calls: 2 calls vs 1; tool_calls[1] lost: get_weather('{"city": "Paris"}')"""
    )


def test_every_differing_field_is_listed_and_lost_reasoning_named() -> None:
    thought_as_content = compare(Message("Hi", "I think"), Message("I thinkHi", ""))
    assert thought_as_content.kind is Kind.CONTENT
    assert thought_as_content.detail == (
        "content @0: 'Hi' vs 'I thinkHi'; reasoning_content @0 (lost): 'I think' vs ''"
    )
    both = compare(Message(tool_calls=(RIO,)), Message(tool_calls=(ToolCall("get_time", '{"city": "Lima"}'),)))
    assert both.detail == (
        "tool_calls[0].name @4: 'get_weather' vs 'get_time'; tool_calls[0].arguments.city @0: 'Rio' vs 'Lima'; "
        "tool_calls[0].arguments.days: missing (expected 4)"
    )


def test_a_one_sided_rejection_shows_the_other_reading() -> None:
    accepted = compare(Rejection("no call"), Message("text", tool_calls=(RIO,)))
    assert accepted.kind is Kind.ACCEPTS
    assert accepted.detail.startswith("oracle rejected: no call; parser read: content='text', get_weather(")
    rejected = compare(Message(reasoning_content="why"), Rejection("bad"))
    assert rejected.detail == "rejected: bad; oracle read: reasoning_content='why'"


def test_ids_only_where_the_oracle_has_one() -> None:
    with_id = ToolCall(RIO.name, RIO.arguments, "abcDEF123")
    other_id = ToolCall(RIO.name, RIO.arguments, "zzzDEF123")
    assert compare(Message(tool_calls=(RIO,)), Message(tool_calls=(with_id,))) is None
    assert (
        compare(Message(tool_calls=(with_id,)), Message(tool_calls=(other_id,))).detail
        == "tool_calls[0].id @0: 'abcDEF123' vs 'zzzDEF123'"
    )


def test_truth_verdicts_take_ids_from_the_oracle() -> None:
    truth = Message(tool_calls=(ToolCall(RIO.name, RIO.arguments, "call_1"),))
    assert verdict(truth, Message(tool_calls=(RIO,)), ids_from=Message(tool_calls=(RIO,))) == "match"
    assert verdict(truth, Message("x", tool_calls=(RIO,))) == "content"


def test_agrees_exactly_where_compare_finds_no_difference() -> None:
    nan_text = ToolCall("f", '{"note": "NaN"}')
    nan_value = ToolCall("f", '{"x": NaN}')
    readings = [
        Message(), Message("a"), Message("a", "b"), Message("a", "b ", (RIO,)), Message("a", "b", (RIO,)),
        Message("a", "b", (ToolCall("get_weather", '{ "days":4,"city":"Rio" }'),)),
        Message("a", "b", (ToolCall("get_weather", '{"city": "Rio", "days": 4.0}'),)),
        Message("a", "b", (ToolCall("get_weather", '{"city": "Rio", "days": 4}', "id1"),)),
        Message("a", "b", (ToolCall("get_weather", '{"city": "Rio", "days": 4'),)),
        Message("a", "b", (RIO, PARIS)), Message(tool_calls=(nan_text,)), Message(tool_calls=(nan_value,)),
        Rejection("x"), Rejection("y"),
    ]
    for expected in readings:
        for actual in readings:
            assert agrees(expected, actual) == (compare(expected, actual) is None), (expected, actual)


SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, 2.5, float("nan")]) | st.text("ab", max_size=2)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=3), max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(left=JSON_VALUES, right=JSON_VALUES, cut=st.integers(0, 40), spaced=st.booleans())
def test_arguments_agree_exactly_where_arguments_difference_finds_none(left: object, right: object, cut: int,
                                                                       spaced: bool) -> None:
    """Arguments as JSON of any shape (NaN, 1 against 1.0 against true, keys in any order), cut off or not."""
    expected = json.dumps(left)
    actual = json.dumps(right, indent=1 if spaced else None)
    for pair in ((expected, actual), (expected, expected), (expected, actual[:cut]), (expected[:cut], expected[:cut])):
        assert arguments_agree(*pair) == (arguments_difference("a", *pair) is None), pair


def test_first_difference_is_the_first_unequal_code_point() -> None:
    pairs = [("", ""), ("abc", "abc"), ("abc", "abd"), ("abc", "ab"), ("", "x"), ("xa" * 300 + "b", "xa" * 300 + "c"),
             ("é🙂a", "é🙂b"), ("a" * 1000, "a" * 999 + "b")]
    for left, right in pairs:
        expected = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
        assert first_difference(left, right) == expected == first_difference(right, left)
