"""The oracle renders real upstream templates and reads replies in their own syntax, as llama.cpp does."""

from __future__ import annotations

import json

import pytest

from chatparity.model import Message, Rejection
from oracle.client import OracleError


def only_call(reading: Message) -> tuple[str, dict]:
    """The name and parsed arguments of the reading's single tool call."""
    assert isinstance(reading, Message), reading
    assert len(reading.tool_calls) == 1, reading
    call = reading.tool_calls[0]
    return call.name, json.loads(call.arguments)


def test_qwen3_reads_a_thought_and_a_json_tool_call(oracle, render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja")
    assert rendered.format == "peg-native"
    assert rendered.generation_prompt == "<|im_start|>assistant\n"
    assert rendered.prompt.endswith(rendered.generation_prompt)
    assert '"name": "get_weather"' in rendered.prompt
    assert (rendered.thinking_start_tag, rendered.thinking_end_tags) == ("<think>", ["</think>"])
    assert "<tool_call>" in rendered.preserved_tokens
    reply = ('<think>\nThe user wants Rio.\n</think>\n\n<tool_call>\n'
             '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}\n</tool_call>')
    reading = oracle.parse(rendered.handle, reply)
    assert reading.reasoning_content.strip() == "The user wants Rio."
    assert reading.content == ""
    assert only_call(reading) == ("get_weather", {"city": "Rio", "days": 4})


def test_qwen3_coder_reads_an_integer_parameter_as_a_number(oracle, render_upstream):
    rendered = render_upstream("Qwen3-Coder.jinja")
    reply = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nRio\n</parameter>\n"
             "<parameter=days>\n4\n</parameter>\n</function>\n</tool_call>")
    name, arguments = only_call(oracle.parse(rendered.handle, reply))
    assert name == "get_weather"
    assert arguments == {"city": "Rio", "days": 4}
    assert isinstance(arguments["days"], int)


def test_glm46_reads_arg_key_arg_value_pairs(oracle, render_upstream):
    rendered = render_upstream("GLM-4.6.jinja")
    assert rendered.generation_prompt == "<|assistant|>"
    reply = ("\n<think>Rio, four days.</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
             "<arg_value>Rio</arg_value>\n<arg_key>days</arg_key>\n<arg_value>4</arg_value>\n</tool_call>")
    reading = oracle.parse(rendered.handle, reply)
    assert reading.reasoning_content == "Rio, four days."
    assert only_call(reading) == ("get_weather", {"city": "Rio", "days": 4})


def test_gpt_oss_reads_analysis_as_reasoning_and_final_as_content(oracle, render_upstream):
    rendered = render_upstream("openai-gpt-oss-120b.jinja", tools=[])
    assert rendered.thinking_start_tag == "<|channel|>analysis<|message|>"
    reply = ("<|channel|>analysis<|message|>The user asks about Rio.<|end|>"
             "<|start|>assistant<|channel|>final<|message|>It is sunny in Rio.")
    assert oracle.parse(rendered.handle, reply) == Message(
        content="It is sunny in Rio.", reasoning_content="The user asks about Rio.")


def test_gpt_oss_reads_a_commentary_channel_call(oracle, render_upstream):
    rendered = render_upstream("openai-gpt-oss-120b.jinja")
    reply = ("<|channel|>analysis<|message|>Need the forecast.<|end|><|start|>assistant to=functions.get_weather"
             '<|channel|>commentary json<|message|>{"city": "Rio", "days": 4}')
    reading = oracle.parse(rendered.handle, reply)
    assert reading.reasoning_content == "Need the forecast."
    assert only_call(reading) == ("get_weather", {"city": "Rio", "days": 4})


def test_a_finished_reply_off_the_format_is_a_rejection(oracle, render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja")
    reply = '<think>\nok\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call><|im_end|>'
    reading = oracle.parse(rendered.handle, reply)
    assert reading == Rejection("The model produced output that does not match the expected peg-native format")
    assert isinstance(oracle.parse(rendered.handle, reply, partial=True), Message)


def test_a_partial_reply_is_read_up_to_the_cut(oracle, render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja")
    reply = '<think>hmm</think>Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Ri'
    reading = oracle.parse(rendered.handle, reply, partial=True)
    assert (reading.reasoning_content, reading.content) == ("hmm", "Sure. ")
    assert [call.name for call in reading.tool_calls] == ["get_weather"]
    assert '"Ri' in reading.tool_calls[0].arguments


def test_enable_thinking_false_in_kwargs_closes_the_thought(render_upstream):
    rendered = render_upstream("Qwen-Qwen3-0.6B.jinja", chat_template_kwargs={"enable_thinking": False})
    assert rendered.generation_prompt == "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def test_the_template_clock_is_the_requests_now(render_upstream):
    first = render_upstream("meta-llama-Llama-3.2-3B-Instruct.jinja", now="2025-06-15T10:30:00Z")
    again = render_upstream("meta-llama-Llama-3.2-3B-Instruct.jinja", now="2025-06-15T10:30:00Z")
    later = render_upstream("meta-llama-Llama-3.2-3B-Instruct.jinja", now="2024-01-02T23:30:00-05:00")
    assert "Today Date: 15 Jun 2025" in first.prompt
    assert first.prompt == again.prompt
    assert "Today Date: 03 Jan 2024" in later.prompt


@pytest.mark.parametrize("source, message", [
    ("{% if %}", "Unexpected token"),
    ("{{ raise_exception('no system role') }}", "no system role"),
])
def test_a_template_that_fails_is_an_error_with_its_message(oracle, source, message):
    with pytest.raises(OracleError, match=message):
        oracle.render({"template": source, "messages": [{"role": "user", "content": "hi"}]})


def test_every_upstream_template_renders_with_tools(render_upstream, upstream_templates):
    names = sorted(path.name for path in upstream_templates.glob("*.jinja"))
    assert len(names) == 70
    formats = {name: render_upstream(name).format for name in names}
    assert set(formats.values()) <= {"peg-native", "peg-gemma4", "peg-minimax-m3"}
