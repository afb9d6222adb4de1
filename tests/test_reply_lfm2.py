"""The LFM2 / LFM2.5 reader (route lfm2, `<|tool_call_start|>[x(k="v")]<|tool_call_end|>`) against llama.cpp,
whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

START, END = "<|tool_call_start|>", "<|tool_call_end|>"
EXTRA = (
    "<think>The user wants the weather.</think>" + START + '[get_weather(city="Rio", days=4)]' + END,
    "<think>Both.</think>Checking." + START + "[get_weather(city='Rio', days=4), get_time()]" + END,
    START + "[create_event(event={'title': 'Lunch', 'place': {'city': 'Oslo', 'room': 3}}, "
    "attendees=['a', 'b'])]" + END,
    START + '[create_event(event={"title": "Lunch", "done": true, "room": null}, attendees=[])]' + END,
    START + "[create_event(event={'title': 'Lunch', 'done': True, 'room': None}, attendees=[])]" + END,
    START + '[get_weather(city="Rio", days="4")]' + END,
    START + "[ get_weather( city='São Paulo' , days=4 ) ]" + END,
    "<think>  </think>It is sunny in Rio.",
    "<think>Plain answer</think>Sunny, 25°C — 東京 too.",
)
MODELS = ("LFM2-8B-A1B.jinja", "LFM2.5-8B-A1B.jinja", "LFM2.5-Instruct.jinja")


@pytest.mark.parametrize("template", MODELS)
def test_reads_as_llama_cpp(oracle, template: str) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, template, EXTRA, "lfm2", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 40 and tally.with_calls > 60
