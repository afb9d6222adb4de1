"""A stalled stream keeps its last reading where the standard mapper maps every node that moved alike
(`maps_alike_grown`): wherever that says alike, mapping the grown parse gives the same message."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reply import chat
from reply.chat import map_nodes, maps_alike_grown
from reply.peg import Node

TAGS = [chat.REASONING, chat.CONTENT, chat.TOOL, chat.TOOL_OPEN, chat.TOOL_CLOSE, chat.TOOL_ID, chat.TOOL_NAME,
        chat.TOOL_ARGS, chat.TOOL_ARG, chat.TOOL_ARG_OPEN, chat.TOOL_ARG_CLOSE, chat.TOOL_ARG_NAME,
        chat.TOOL_ARG_VALUE, chat.TOOL_ARG_STRING_VALUE, ""]
CALL = '<call>get_weather '
TEXTS = st.text(alphabet='{}<>"a 1\n:', max_size=6)


def call_tree(tag: str, start: int, end: int) -> tuple[Node, ...]:
    """A call of get_weather whose last node, tagged `tag`, spans [start, end)."""
    opening = Node("open", chat.TOOL_OPEN, 0, 6, (), False)
    name = Node("name", chat.TOOL_NAME, 6, len(CALL) - 1, (), False)
    last = Node("last", tag, start, end, (), True)
    return (Node("call", chat.TOOL, 0, end, (opening, name, last), True),)


def read(mapped: chat.Mapped) -> tuple[object, ...]:
    """What a mapping shows: reasoning, content and calls."""
    return ("".join(mapped.reasoning), "".join(mapped.content),
            tuple((call.name, call.arguments, call.id) for call in mapped.calls))


@settings(max_examples=400)
@given(st.sampled_from(TAGS), TEXTS, TEXTS)
def test_a_node_the_mapper_maps_alike_grown_reads_the_same(tag: str, before: str, grown: str) -> None:
    start = len(CALL)
    old_text, new_text = CALL + before, CALL + before + grown
    old = call_tree(tag, start, len(old_text))
    new = call_tree(tag, start, len(new_text))
    if maps_alike_grown(new[0].children[-1], len(old_text), new_text):
        assert read(map_nodes(old_text, old)) == read(map_nodes(new_text, new))


def test_arguments_that_start_as_a_json_object_map_otherwise_grown() -> None:
    old_text, new_text = CALL + '{"a"', CALL + '{"a": 1}'
    grown = call_tree(chat.TOOL_ARGS, len(CALL), len(new_text))[0].children[-1]
    assert not maps_alike_grown(grown, len(old_text), new_text)
    assert read(map_nodes(old_text, call_tree(chat.TOOL_ARGS, len(CALL), len(old_text)))) != read(
        map_nodes(new_text, call_tree(chat.TOOL_ARGS, len(CALL), len(new_text))))
