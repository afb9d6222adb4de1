"""The GigaChat 3.1 reader (autoparser, `<|function_call|>{"name": …, "arguments": {…}}`) against llama.cpp, whole
and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}'
EXTRA = (
    f"<|function_call|>{WEATHER}",
    f"Let me check.\n<|function_call|>{WEATHER}",
    f'<|function_call|>{WEATHER}, {{"name": "get_time", "arguments": {{}}}}',
    f"<|function_call|>{WEATHER} and more",
    '<|function_call|>{"name": "get_weather", "arguments": "Rio"}',
    "Plain answer",
)
WHOLE, STREAMED, WITH_CALLS = 600, 50, 150


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "GigaChat3.1-10B-A1.8B.jinja", EXTRA, "gigachat_v31", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
