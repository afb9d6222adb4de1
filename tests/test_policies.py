"""A parser's policies: read from its expectations, and recognized from the readings alone on any reply."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatparity.model import Message, Rejection, ToolCall
from harness.policies import Policies, Policy, PolicyFileError, load_policies, policies_in
from harness.policy_rules import Point
from tests.markdown_links import anchors

PROJECT_ROOT = Path(__file__).resolve().parent.parent
REPLY_POLICIES = PROJECT_ROOT / "reply" / "expectations" / "policies.toml"
MARKERS = ("<think>", "</think>", "<tool_call>", ">>>")


def policies(*rules: str) -> Policies:
    """Policies named after the rules they use, in this order."""
    return Policies(tuple(Policy(rule, rule, "why", "README.md") for rule in rules))


def call(arguments: str, name: str = "get_weather") -> Message:
    """A message holding one call."""
    return Message(tool_calls=(ToolCall(name, arguments),))


def test_a_marker_start_held_back_while_text_arrives_is_the_policy() -> None:
    found = policies("held_marker_start").explain(
        Message(content="Let me check<tool_"), Message(content="Let me check"),
        Point("Let me check<tool_", True, MARKERS),
    )
    assert found == ("held_marker_start",)


def test_held_text_that_starts_no_marker_is_not_the_policy() -> None:
    rules = policies("held_marker_start")
    text = "Let me check, Rio"
    assert rules.explain(Message(content=text), Message(content="Let me check"), Point(text, True, MARKERS)) is None


def test_a_marker_start_llama_cpp_also_holds_in_part_is_the_policy() -> None:
    found = policies("held_marker_start").explain(
        Message(content="ok >"), Message(content="ok "), Point("ok >>", True, MARKERS)
    )
    assert found == ("held_marker_start",)


def test_nothing_is_held_back_in_a_finished_reply() -> None:
    rules = policies("held_marker_start")
    assert rules.explain(Message(content="a<tool_"), Message(content="a"), Point("a<tool_", False, MARKERS)) is None


def test_arguments_held_to_their_last_closable_point_are_the_policy_and_no_further() -> None:
    rules = policies("held_arguments")
    point = Point("", True, MARKERS)
    assert rules.explain(call('{"city": "Rio", "da'), call('{"city": "Rio"'), point) == ("held_arguments",)
    assert rules.explain(call('{"city": "Rio", "da'), call('{"city": "R'), point) is None
    assert rules.explain(call('{"city": "Rio", "da'), call('{"city": "Rio", "d'), point) is None


def test_closed_arguments_of_a_finished_reply_are_the_policy() -> None:
    rules = policies("closed_arguments")
    point = Point("", False, MARKERS)
    assert rules.explain(call('{"city": "Rio'), call('{"city": "Rio"}'), point) == ("closed_arguments",)
    assert rules.explain(call('{"city": "Rio'), call("{}"), point) is None


def test_escaped_control_characters_are_the_policy() -> None:
    found = policies("escaped_control_characters").explain(
        call('{"a": "x\ny"}'), call('{"a": "x\\ny"}'), Point("", False, MARKERS)
    )
    assert found == ("escaped_control_characters",)


def test_a_call_llama_cpp_drops_kept_as_its_stream_showed_it_held_and_closed() -> None:
    shown = call('{"city":"Rio","days":4')
    point = Point("…", False, MARKERS, stream_end=shown)
    found = policies("kept_stream", "held_arguments", "closed_arguments").explain(
        Message(content="<tool_call>get_weather …"), call('{"city":"Rio"}'), point
    )
    assert found == ("kept_stream", "held_arguments", "closed_arguments")


def test_kept_stream_needs_llama_cpp_to_take_back_what_it_showed() -> None:
    shown = call('{"city":"Rio"')
    point = Point("…", False, MARKERS, stream_end=shown)
    rules = policies("kept_stream", "held_arguments", "closed_arguments")
    assert rules.explain(call('{"city":"Rio","days":4}'), call('{"city":"Rio"}'), point) is None


def test_two_policies_together_explain_a_snapshot() -> None:
    expected = Message(content="Sure<th", tool_calls=(ToolCall("f", '{"a": 1, "b'),))
    actual = Message(content="Sure", tool_calls=(ToolCall("f", '{"a": 1'),))
    found = policies("held_marker_start", "held_arguments").explain(expected, actual, Point("x<th", True, MARKERS))
    assert found == ("held_marker_start", "held_arguments")


def test_a_rejection_on_either_side_is_never_a_policy() -> None:
    rules = policies("held_marker_start", "closed_arguments")
    assert rules.explain(Rejection("off"), Message(), Point("", False, MARKERS)) is None
    assert rules.explain(Message(), Rejection("off"), Point("", False, MARKERS)) is None


def test_the_project_parsers_policies_load_and_name_where_they_are_documented() -> None:
    loaded = load_policies(REPLY_POLICIES)
    assert {policy.rule for policy in loaded.policies} == {
        "kept_stream", "held_marker_start", "held_arguments", "escaped_control_characters", "closed_arguments",
    }
    for policy in loaded.policies:
        document, anchor = policy.documented.split("#")
        assert anchor in anchors(PROJECT_ROOT / document), policy.documented



def test_no_expectations_directory_means_no_policies(tmp_path: Path) -> None:
    assert policies_in(None).policies == ()
    assert policies_in(tmp_path).policies == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[policy]]\nname = 'a'\n", "field 'rule': missing"),
        ('[[policy]]\nname = "a"\nrule = "guess"\nreason = "r"\ndocumented = "d"\n', "'guess' is not one of"),
        ('[[policy]]\nname = "A b"\nrule = "held_arguments"\nreason = "r"\ndocumented = "d"\n', "is not lowercase"),
        ('[[policy]]\nname = "a"\nrule = "held_arguments"\nreason = "r"\ndocumented = "d"\nextra = 1\n',
         "unknown keys ['extra']"),
        ('[[policy]]\nname = "a"\nrule = "held_arguments"\nreason = "r"\ndocumented = "d"\n' * 2, "named twice"),
        ("[policy\n", "not valid TOML"),
        ("[other]\n", "unknown top-level keys"),
    ],
)
def test_a_bad_policies_file_is_one_line_naming_the_entry_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "policies.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyFileError) as raised:
        load_policies(path)
    assert message in str(raised.value) and str(path) in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_header_still_arriving_after_a_whole_marker_is_held_on_its_line_only() -> None:
    rules = policies("held_marker_start")
    shown = "I need it.\n to=functions.get_weather<|channel|>commentary "
    found = rules.explain(Message(reasoning_content=shown), Message(reasoning_content=shown[: -len("<|channel|>commentary ")]),
                          Point(shown, True, ("<|channel|>",)))
    assert found == ("held_marker_start",)
    text = "x<|channel|>final\nHello"
    assert rules.explain(Message(content=text), Message(content="x"), Point(text, True, ("<|channel|>",))) is None


SERVER_POLICIES = PROJECT_ROOT / "harness" / "server_expectations" / "policies.toml"


def test_the_raw_text_served_for_an_empty_read_is_the_server_policy_only_when_finished() -> None:
    rules = load_policies(SERVER_POLICIES)
    text = ' to=functions.get_weather<|channel|>analysis json<|message|>{"city": "Rio"}'
    finished = Point(text, False, MARKERS)
    assert rules.explain(Message(), Message(content=text), finished) == ("serves-raw-text-for-an-empty-read",)
    assert rules.explain(Message(), Message(content=text), Point(text, True, MARKERS)) is None
    assert rules.explain(Message(), Message(content=text[1:]), finished) is None
    assert rules.explain(Message(content="x"), Message(content=text), finished) is None


def test_an_invented_call_id_is_the_server_policy_and_nothing_else_of_the_call() -> None:
    rules = load_policies(SERVER_POLICIES)
    written = Message(tool_calls=(ToolCall("get_weather", '{"city": "Rio"}', "Xq7Tz2Lp9"),))
    invented = Message(tool_calls=(ToolCall("get_weather", '{"city": "Rio"}'),))
    point = Point("[TOOL_CALLS][...]", False, MARKERS)
    assert rules.explain(written, invented, point) == ("streams-invented-call-ids",)
    other = Message(tool_calls=(ToolCall("get_weather", '{"city": "Oslo"}'),))
    assert rules.explain(written, other, point) is None
    renamed = Message(tool_calls=(ToolCall("get_time", '{"city": "Rio"}'),))
    assert rules.explain(written, renamed, point) is None


def test_a_policy_may_waive_only_the_consistent_check(tmp_path: Path) -> None:
    rules = load_policies(SERVER_POLICIES)
    assert rules.broken_by("streams-invented-call-ids") == ("consistent",)
    assert rules.broken_by("serves-raw-text-for-an-empty-read") == ()
    assert load_policies(REPLY_POLICIES).broken_by("keeps-what-the-stream-showed+holds-marker-starts") == ()
    path = tmp_path / "policies.toml"
    path.write_text('[[policy]]\nname = "a"\nrule = "kept_stream"\nreason = "r"\ndocumented = "d"\n'
                    'breaks = ["clean"]\n')
    with pytest.raises(PolicyFileError, match=r"#1: field 'breaks': \['clean'\]"):
        load_policies(path)
