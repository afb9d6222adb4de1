"""The generation prompt the readers render: worked out once per template and arguments, never confusing
arguments that JSON writes alike but a template tells apart."""

from __future__ import annotations

import jinja2
import pytest

from reply.rendering import generation_prompt
from reply.template import template_of

KEY_TYPES = (
    "{% for message in messages %}{{ message.content }}{% endfor %}"
    "{% if add_generation_prompt %}{% for key in table %}[{{ key is string }}]{% endfor %}"
    "{% for row in rows %}({{ row is sequence }}){% endfor %}{% endif %}"
)
USER = [{"role": "user", "content": "Hi"}]


def prompt(extra: dict[str, object]) -> str:
    """The generation prompt of KEY_TYPES with `extra` as template variables."""
    return generation_prompt(KEY_TYPES, bos="", eos="", messages=USER, tools=[], enable_thinking=False,
                             extra=extra)


def test_keys_json_writes_alike_render_apart_whichever_comes_first() -> None:
    assert prompt({"table": {"1": "a"}, "rows": []}) == "[True]"
    assert prompt({"table": {1: "a"}, "rows": []}) == "[False]"
    assert prompt({"table": {"1": "a"}, "rows": []}) == "[True]"


def test_values_json_cannot_write_still_render() -> None:
    assert prompt({"table": {}, "rows": [{1, 2}]}) == "(False)"
    assert prompt({"table": {}, "rows": [(1, 2)]}) == "(True)"


def test_one_template_per_source_and_special_tokens() -> None:
    assert template_of(KEY_TYPES, "<s>", "</s>") is template_of(KEY_TYPES, "<s>", "</s>")
    assert template_of(KEY_TYPES, "<s>", "</s>") is not template_of(KEY_TYPES, "", "</s>")


def test_an_undefined_variable_joins_a_string_as_llama_cpp_joins_it() -> None:
    """`text + undefined` and `undefined + text` are the text; any other use of it still fails."""
    joined = "{% if add_generation_prompt %}{{ 'a' + missing }}|{{ missing + 'b' }}{% endif %}"
    assert generation_prompt(joined, bos="", eos="", messages=USER, tools=[], enable_thinking=False) == "a|b"
    with pytest.raises(jinja2.UndefinedError):
        generation_prompt("{{ missing + 1 }}", bos="", eos="", messages=USER, tools=[], enable_thinking=False)
