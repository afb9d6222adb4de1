"""Arguments that arrive as text are typed by the tool's JSON schema, as llama.cpp types them; checked
against the oracle for the qwen3_coder, glm and deepseek_v3_2 syntaxes."""

from __future__ import annotations

import json

import pytest

import reply
from reply.schema import ALL_TYPES, may_be_string, value_types
from tests.reply_oracle_compare import conform
from tests.reply_support import session

pytestmark = pytest.mark.oracle

CASES = {
    "Qwen3-Coder.jinja": (
        '<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n'
        '<parameter=days>\n{days}\n</parameter>\n</function>\n</tool_call>'),
    "GLM-4.7-Flash.jinja": (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>{city}</arg_value>"
        "<arg_key>days</arg_key><arg_value>{days}</arg_value></tool_call>"),
    "deepseek-ai-DeepSeek-V3.2.jinja": (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">{city}</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="days" string="false">{days}</｜DSML｜parameter>\n'
        '</｜DSML｜invoke>\n</｜DSML｜function_calls>'),
}
VALUES = [("Rio", "4"), ("4", "4"), ("{'a': True}", "4"), ("Rio", "4.5"), ("Rio", '"4"'), ("Rio", "[1, 2]"),
          ("Rio", "four"), ("Rio", "True")]


@pytest.mark.parametrize("template", sorted(CASES))
def test_text_arguments_typed_as_llama_cpp_types_them(template: str) -> None:
    """A string parameter keeps its text; an integer one is read as JSON (or the reply is refused, or where
    llama.cpp reads nothing, the reply reads as its stream last showed it): the harness runner's rows agree."""
    texts = [(CASES[template].format(city=city, days=days), False) for city, days in VALUES]
    tally = conform(template, reply.open(session(template, "nothink/auto")).syntax.name, lambda planned: texts,
                    modes=("nothink/auto",), stream_every=1, corpus=False, reasoning_none=False,
                    conversation="single")
    assert tally.differences == []
    assert tally.whole == len(VALUES) and tally.streamed == len(VALUES)


def test_integer_text_becomes_a_number_and_string_text_stays_text() -> None:
    """"4" for an integer parameter is 4; for a string parameter it is "4"."""
    s = session("GLM-4.7-Flash.jinja", "nothink/auto")
    message = reply.open(s).parse(CASES["GLM-4.7-Flash.jinja"].format(city="4", days="4"))
    assert json.loads(message.tool_calls[0].arguments) == {"city": "4", "days": 4}


def test_schema_questions() -> None:
    """value_types and may_be_string follow anyOf, type lists, enums, const and $ref."""
    root = {"$defs": {"n": {"type": "integer"}}}
    assert value_types({"type": ["string", "null"]}, root) == {"string", "null"}
    assert value_types({"$ref": "#/$defs/n"}, root) == {"integer"}
    assert value_types({"type": "number"}, root) == {"number", "integer"}
    assert value_types({}, root) >= {"string", "object"}
    assert may_be_string({"enum": [1, "a"]}, root)
    assert not may_be_string({"enum": [1, 2]}, root)
    assert not may_be_string({"const": 3}, root)
    assert may_be_string({"anyOf": [{"type": "integer"}, {"type": "string"}]}, root)
    assert not may_be_string({}, root)


def test_a_schema_without_a_type_is_a_string_by_llama_cpp_string_keywords() -> None:
    """A length bound, a pattern or a format llama.cpp knows makes an untyped schema a string's; a format it
    does not know leaves any value."""
    root: dict[str, object] = {}
    for keyword in ({"minLength": 1}, {"maxLength": 6}, {"pattern": "^a"}, {"format": "date"}, {"format": "uuid4"}):
        assert value_types(keyword, root) == {"string"} and may_be_string(keyword, root), keyword
    assert value_types({"format": "uri"}, root) == ALL_TYPES and not may_be_string({"format": "uri"}, root)
