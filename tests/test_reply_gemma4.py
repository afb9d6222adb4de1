"""The Gemma 4 reader (route gemma4, `<|tool_call>call:x{k:<|"|>v<|"|>}<tool_call|>` converted to JSON by
llama.cpp's gemma4 mapper) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

Q = '<|"|>'
WEATHER = f"<|tool_call>call:get_weather{{city:{Q}Rio{Q},days:4}}<tool_call|>"
TIME = "<|tool_call>call:get_time{}<tool_call|>"
EVENT = (f"<|tool_call>call:create_event{{event:{{title:{Q}Lunch{Q},"
         f"place:{{city:{Q}Oslo{Q},room:3}},done:true,note:null}},attendees:[{Q}a{Q},{Q}b{Q}]}}<tool_call|>")
EXTRA = (
    "<|channel>thought\nThe user wants the weather.<channel|>" + WEATHER,
    "<|channel>thought\nBoth.<channel|>Checking." + WEATHER + TIME,
    EVENT,
    WEATHER.replace("days:4", f"days:{Q}4{Q}"),
    f"<|tool_call>call:get_weather{{city:{Q}Rio, {{\"a\": 1}}{Q},days:-4.5e1}}<tool_call|>",
    "<|channel>thought\n<channel|>It is sunny in Rio.",
    "<|channel><|channel>thought\nEmpty channel first.<channel|>Sunny, 25°C — 東京 too.",
    "It is sunny.<|channel>thought\n<channel|>",
    "It is sunny.<channel|>",
)
MODELS = ("google-gemma-4-31B-it.jinja", "google-gemma-4-31B-it-interleaved.jinja")


@pytest.mark.parametrize("template", MODELS)
def test_reads_as_llama_cpp(oracle, template: str) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, template, EXTRA, "gemma4", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 40 and tally.with_calls > 60
