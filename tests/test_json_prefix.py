"""The harness's own reading of call arguments still arriving: where they can close into a JSON object, and closed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.json_prefix import closable, closed, escaped_controls, held, is_object


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ('{"city": "Ri', '{"city": "Ri'),
        ('{"city": "Rio", "da', '{"city": "Rio"'),
        ('{"city": "Rio", "days"', '{"city": "Rio"'),
        ('{"city": "Rio", "days":', '{"city": "Rio"'),
        ('{"city": "Rio", "days": 4', '{"city": "Rio"'),
        ('{"city": "Rio", "days": 4,', '{"city": "Rio", "days": 4'),
        ('{"ok": tru', "{"),
        ('{"a": [1, {"b": "x\\', '{"a": [1, {"b": "x'),
        ('{"a": "\\u00', '{"a": "'),
        ('{"a": {}}', '{"a": {}}'),
        ("", ""),
        ("[1]", ""),
    ],
)
def test_held_arguments_stop_at_their_last_closable_point(arguments: str, shown: str) -> None:
    assert held(arguments) == shown


def test_a_raw_control_character_in_a_string_is_escaped_but_not_elsewhere() -> None:
    assert escaped_controls('{"a": "x\ny",\n"b": "\t"}') == '{"a": "x\\ny",\n"b": "\\t"}'
    assert held('{"a": "x\ny') == '{"a": "x\\ny'


@pytest.mark.parametrize(
    ("arguments", "made"),
    [
        ('{"city": "Rio", "days": 4', '{"city": "Rio", "days": 4}'),
        ('{"city": "Rio, "days": 4}', '{"city": "Rio, "}'),
        ("{", "{}"),
        ("not json", "{}"),
        ('{"a": [1, 2', '{"a": [1, 2]}'),
        ('{"a": "b"}', '{"a": "b"}'),
    ],
)
def test_finished_arguments_close_into_an_object(arguments: str, made: str) -> None:
    assert closed(arguments) == made
    assert is_object(closed(arguments))


@given(st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=8), st.booleans()),
                       max_size=4))
def test_every_prefix_held_is_a_prefix_that_closes(value: dict[str, object]) -> None:
    text = json.dumps(value)
    for end in range(len(text) + 1):
        shown = held(text[:end])
        assert text.startswith(shown)
        length, closing = closable(text[:end])
        assert shown == text[:length]
        assert not shown or is_object(shown + closing) or is_object(shown)
