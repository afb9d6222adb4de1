"""The Command R7B reader (autoparser, `<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>`,
answers in <|START_RESPONSE|>…<|END_RESPONSE|>) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Rio", "days": 4}}'
TIME = '{"tool_call_id": 1, "tool_name": "get_time", "parameters": {}}'
THOUGHT = "<|START_THINKING|>The user wants the weather.<|END_THINKING|>"
EXTRA = (
    THOUGHT + f"<|START_ACTION|>[\n    {WEATHER}\n]<|END_ACTION|>",
    THOUGHT + f"<|START_ACTION|>[\n    {WEATHER},\n    {TIME}\n]<|END_ACTION|>",
    f"<|START_ACTION|>[{WEATHER}]<|END_ACTION|>",
    "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>",
    THOUGHT + "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>",
    '<|START_ACTION|>[{"tool_name": "get_time", "parameters": {}}]<|END_ACTION|>',
    "A bare answer",
)
WHOLE, STREAMED, WITH_CALLS = 800, 50, 90


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(
        oracle, "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", EXTRA, "command_r", stream_every=8
    )
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
