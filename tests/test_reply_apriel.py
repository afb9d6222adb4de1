"""The Apriel reader (autoparser, `<tool_calls>[{"name": …, "arguments": {…}}]</tool_calls>`) against llama.cpp,
whole and streamed, on Apriel 1.6 (reasoning up to [BEGIN FINAL RESPONSE]) and Apriel 1.5."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}'
EXTRA = (
    f"The user asks for weather.\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{WEATHER}]</tool_calls>",
    "Simple.\n[BEGIN FINAL RESPONSE]\nIt is sunny in Rio.",
    f'[BEGIN FINAL RESPONSE]<tool_calls>[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]</tool_calls>',
    f"<tool_calls>[{WEATHER}]</tool_calls>",
    f"Thinking.\n[BEGIN FINAL RESPONSE]\nSure. <tool_calls>[{WEATHER}]</tool_calls> done",
    "Thinking that never ends",
)
EXTRA_1_5 = (
    f"<tool_calls>[{WEATHER}]</tool_calls>",
    f'Let me check.\n<tool_calls>[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]</tool_calls>',
    f"<tool_calls>[{WEATHER}]</tool_calls>\n<|end|>",
    "It is sunny in Rio.",
)
WHOLE, STREAMED, WITH_CALLS = 700, 45, 120
WHOLE_1_5, STREAMED_1_5, WITH_CALLS_1_5 = 450, 35, 130


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "Apriel-1.6-15b-Thinker-fixed.jinja", EXTRA, "apriel", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS


def test_apriel_1_5_reads_as_llama_cpp(oracle) -> None:
    """Apriel 1.5 (no reasoning markers) reads its calls the same way."""
    tally = compare(oracle, "unsloth-Apriel-1.5.jinja", EXTRA_1_5, "apriel", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE_1_5 and tally.streamed > STREAMED_1_5 and tally.with_calls > WITH_CALLS_1_5
