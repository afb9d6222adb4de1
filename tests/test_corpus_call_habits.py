"""The quick corpus holds calls as models write them beyond the template's own text: an OpenAI `"type"` field in
a JSON call, a Python-quoted integer, a strictly typed call (nulls, a digit string, a top-level boolean, an
object under anyOf), a call through a Pydantic-style schema of references, and the same call written twice where
one call is allowed, a backslash left unescaped in a JSON string, and Python literals written as JSON's (and
JSON's as Python's) where a template writes them, a JSON call's id left empty, and a space after each argument
key where the template writes none; each streamed in the quick profile."""

from __future__ import annotations

from chatparity.model import Reply
from corpora.catalog import plan, replies
from corpora.tools import BOOK_TRIP
from harness.profiles import rules_of
from reply.schema import may_be_string, value_types


def quick_reply(template: str, mode: str, shape: str, conversation: str = "single") -> Reply:
    """The one quick reply of a shape in a template's session of a mode."""
    (session,) = [s for s in plan("quick", template, None, mode) if s.session.conversation == conversation]
    (found,) = [reply for reply in replies(session, "quick") if reply.shape == shape]
    return found


def test_a_json_call_carries_an_openai_type_field_before_its_name() -> None:
    reply = quick_reply("Qwen-Qwen3-0.6B.jinja", "think/auto", "openai_type_field_in_call")
    assert '{"type": "function", "name": "get_weather", "arguments":' in reply.text
    assert rules_of("quick").applies("char3", reply, "think/auto")


def test_an_integer_value_written_outside_json_is_python_quoted() -> None:
    kimi = quick_reply("Kimi-K3.jinja", "think/auto", "python_quoted_argument_value")
    assert "type=\"number\"<|sep|>'4'<|close|>argument" in kimi.text and "arguments_schema" in kimi.exempt
    lfm2 = quick_reply("LFM2.5-8B-A1B.jinja", "think/auto", "python_quoted_argument_value")
    assert "days='4'" in lfm2.text
    assert rules_of("quick").applies("char3", kimi, "think/auto")


def test_a_template_writing_integers_only_in_json_skips_the_python_quote() -> None:
    (session,) = [s for s in plan("quick", "Qwen-Qwen3-0.6B.jinja", None, "think/auto")
                  if s.session.conversation == "single"]
    assert "python_quoted_argument_value" not in {reply.shape for reply in replies(session, "quick")}


def test_a_strictly_typed_call_is_written_as_each_template_writes_its_types() -> None:
    lfm2 = quick_reply("LFM2.5-8B-A1B.jinja", "think/parallel", "strictly_typed_call", "typed_tools")
    assert "refundable=True" in lfm2.text and "memo='2048'" in lfm2.text and "budget=None" in lfm2.text
    minimax = quick_reply("MiniMax-M3.jinja", "think/parallel", "strictly_typed_call", "typed_tools")
    assert "<hotel>]<]minimax[>[<name>Fjord Inn" in minimax.text
    assert rules_of("quick").applies("char3", minimax, "think/parallel")


def test_a_call_through_schema_references_is_written_as_each_template_expands_them() -> None:
    (session,) = [s for s in plan("quick", "Qwen3-Coder.jinja", None, "think/parallel")
                  if s.session.conversation == "typed_tools"]
    (tool,) = [t for t in session.session.tools if t["function"]["name"] == "order_meal"]
    schema = tool["function"]["parameters"]
    assert value_types(schema["properties"]["deliver_to"], schema) == {"object"}
    assert may_be_string(schema["properties"]["extra"], schema) and value_types(
        schema["properties"]["extra"], schema) == {"string", "integer"}
    qwen = quick_reply("Qwen3-Coder.jinja", "think/parallel", "referenced_schema_call", "typed_tools")
    assert '<parameter=deliver_to>\n{"city": "Rio", "zone": null}\n</parameter>' in qwen.text
    assert "<parameter=extra>\nnapkins\n</parameter>" in qwen.text
    minimax = quick_reply("MiniMax-M3.jinja", "think/parallel", "referenced_schema_call", "typed_tools")
    assert "<deliver_to>]<]minimax[>[<city>Rio]<]minimax[>[</city>" in minimax.text
    assert rules_of("quick").applies("char3", minimax, "think/parallel")


def test_the_same_call_is_written_twice_also_where_one_call_is_allowed() -> None:
    one = quick_reply("Qwen-Qwen3-0.6B.jinja", "think/auto", "prose_before_call").text
    call = one[one.index("<tool_call>"):]
    for mode in ("think/auto", "think/required", "think/parallel"):
        twice = quick_reply("Qwen-Qwen3-0.6B.jinja", mode, "same_call_twice")
        assert twice.text.endswith(call + call) and twice.text.count("<tool_call>") == 2
    assert rules_of("quick").applies("char3", twice, "think/parallel")


def test_a_json_string_argument_holds_an_unescaped_backslash() -> None:
    reply = quick_reply("Qwen-Qwen3-0.6B.jinja", "think/auto", "unescaped_backslash_in_json_string")
    assert '"city": "Rio\\Lima"' in reply.text
    assert rules_of("quick").applies("char3", reply, "think/auto")


def test_a_call_written_with_python_literals_is_also_written_with_json_ones_and_python_ones() -> None:
    typed, as_json, as_python = (
        quick_reply("LFM2.5-8B-A1B.jinja", "think/parallel", shape, "typed_tools")
        for shape in ("typed_call", "typed_call_with_json_literals", "typed_call_with_python_literals")
    )
    assert "return_date=None" in typed.text and '{"window": true' in typed.text
    assert "return_date=null" in as_json.text and "None" not in as_json.text
    assert '{"window": True' in as_python.text and "return_date=None" in as_python.text
    assert as_json.truth == as_python.truth == typed.truth
    assert rules_of("quick").applies("char3", as_python, "think/parallel")
    (session,) = [s for s in plan("quick", "Qwen-Qwen3-0.6B.jinja", None, "think/parallel")
                  if s.session.conversation == "typed_tools"]
    assert not [reply for reply in replies(session, "quick") if "literals" in reply.shape]


def test_a_python_quoted_string_carries_an_escaped_slash_and_quote() -> None:
    reply = quick_reply("LFM2.5-8B-A1B.jinja", "think/auto", "escaped_slash_and_exponent_in_arguments")
    assert "city='Rio\\/L\\'Aquila\\u00e9'" in reply.text and "days=-0.45e+1" in reply.text


def test_a_list_under_a_schema_without_a_type_is_called_in_the_schemas_order() -> None:
    reply = quick_reply("MiniMax-M3.jinja", "think/parallel", "untyped_schema_call", "typed_tools")
    assert "<stops>" in reply.text and "Cusco" in reply.text
    assert reply.text.index("<cabin>") < reply.text.index("<travellers>")
    assert reply.truth is not None and '"stops": ["Cusco", "Puno"]' in reply.truth.tool_calls[0].arguments


def test_a_json_call_writes_its_id_field_empty() -> None:
    nemo = quick_reply("mistralai-Mistral-Nemo-Instruct-2407.jinja", "think/auto", "empty_call_id")
    cohere = quick_reply("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "think/auto", "empty_call_id")
    assert '"id": ""' in nemo.text and '"tool_call_id": ""' in cohere.text
    (session,) = [s for s in plan("quick", "Qwen-Qwen3-0.6B.jinja", None, "think/auto")
                  if s.session.conversation == "single"]
    assert "empty_call_id" not in {reply.shape for reply in replies(session, "quick")}


def test_a_call_written_without_spaces_after_its_keys_is_also_written_with_them() -> None:
    gemma = quick_reply("google-gemma-4-31B-it.jinja", "think/auto", "space_after_argument_keys")
    assert "{city: <|\"|>Rio<|\"|>,days: 4}" in gemma.text and "call:get_weather" in gemma.text
    assert rules_of("quick").applies("char3", gemma, "think/auto")
    (session,) = [s for s in plan("quick", "Qwen-Qwen3-0.6B.jinja", None, "think/auto")
                  if s.session.conversation == "single"]
    assert "space_after_argument_keys" not in {reply.shape for reply in replies(session, "quick")}


def test_a_number_is_written_with_a_point_and_no_digit_after_it() -> None:
    qwen = quick_reply("Qwen-Qwen3-0.6B.jinja", "think/auto", "number_without_fraction_digits")
    lfm = quick_reply("LFM2.5-8B-A1B.jinja", "think/auto", "number_without_fraction_digits")
    assert '"days": 4.}' in qwen.text and "days=4.)" in lfm.text
    assert "arguments_json" in qwen.exempt


def test_schemas_without_a_type_hold_an_object_and_lists() -> None:
    reply = quick_reply("MiniMax-M3.jinja", "think/parallel", "typeless_schemas_call", "typed_tools")
    hours = reply.text[reply.text.index("<hours>"):reply.text.index("</hours>")]
    assert "<phone>+55 21 5550100" in reply.text and hours.count("<item>") == 2
    assert reply.truth is not None and '"hours": [18, 20]' in reply.truth.tool_calls[0].arguments
    coder = quick_reply("Qwen3-Coder.jinja", "think/parallel", "typeless_schemas_call", "typed_tools")
    assert '<parameter=tags>\n["quiet", "late"]\n</parameter>' in coder.text


def test_a_call_carries_the_id_of_llama_cpps_analysis_probe_where_the_template_writes_ids() -> None:
    solar = quick_reply("upstage-Solar-Open-100B.jinja", "nothink/auto", "call_id_of_the_analysis_probe")
    assert "<|tool_call:begin|>call00001<|tool_call:name|>get_weather" in solar.text
    (session,) = [s for s in plan("quick", "Qwen-Qwen3-0.6B.jinja", None, "think/auto")
                  if s.session.conversation == "single"]
    assert "call_id_of_the_analysis_probe" not in {reply.shape for reply in replies(session, "quick")}


def test_a_call_names_a_parameter_whose_name_begins_with_another_and_holds_quotes_of_both_kinds() -> None:
    kimi = quick_reply("Kimi-K3.jinja", "think/parallel", "prefixed_name_call", "typed_tools")
    assert 'key="memo_parts" type="object"' in kimi.text and 'key="memo"' not in kimi.text
    assert "memo" in BOOK_TRIP["function"]["parameters"]["properties"]
    coder = quick_reply("Qwen3-Coder.jinja", "think/parallel", "prefixed_name_call", "typed_tools")
    value = coder.text[coder.text.index("<parameter=memo_parts>"):]
    assert value.index('\\"obrigado\\"') < value.index("Ana's")


def test_a_nullable_integer_is_called_where_no_string_is_allowed_and_a_call_id_is_written_as_a_number() -> None:
    minimax = quick_reply("MiniMax-M3.jinja", "think/parallel", "prefixed_name_call", "typed_tools")
    assert "<nights>3" in minimax.text
    assert BOOK_TRIP["function"]["parameters"]["properties"]["nights"]["type"] == ["integer", "null"]
    nemo = quick_reply("mistralai-Mistral-Nemo-Instruct-2407.jinja", "think/auto", "call_id_written_as_a_number")
    assert '"id": 123456789}' in nemo.text
