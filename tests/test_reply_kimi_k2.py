"""The Kimi K2 reader (route kimi_k2, `<|tool_call_begin|>functions.x:0<|tool_call_argument_begin|>{json}`)
against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

SECTION, END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
WEATHER = ('<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Rio", "days": 4}'
           "<|tool_call_end|>")
TIME = "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
EXTRA = (
    "<think>The user wants the weather.</think>" + SECTION + WEATHER + END,
    "<think>Two things.</think>Checking both." + SECTION + WEATHER + TIME + END,
    "<think>Straight into the call" + SECTION + WEATHER + END,
    "<think>No section marker</think>" + WEATHER,
    SECTION + WEATHER.replace("<|tool_call_end|>", "") + END,
    SECTION + WEATHER.replace(":0", ":x") + END,
    SECTION + WEATHER.replace('"days": 4', '"days": "4"') + END,
    "<think>   </think>It is sunny in Rio.",
    "<think>Plain answer</think>Sunny, 25°C — 東京 too.",
)
MODELS = ("Kimi-K2-Instruct.jinja", "Kimi-K2-Thinking.jinja", "moonshotai-Kimi-K2.jinja")


@pytest.mark.parametrize("template", MODELS)
def test_reads_as_llama_cpp(oracle, template: str) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, template, EXTRA, "kimi_k2", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 40 and tally.with_calls > 60
