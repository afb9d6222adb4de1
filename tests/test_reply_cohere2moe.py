"""The Cohere2 MoE reader (route cohere2moe, `<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]`)
against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Rio", "days": 4}}'
TIME = '{"tool_call_id": 1, "tool_name": "get_time", "parameters": {}}'
THOUGHT = "The user wants the weather.<|END_THINKING|>"
EXTRA = (
    THOUGHT + "<|START_TEXT|>It is sunny.<|END_TEXT|>",
    THOUGHT + f"<|START_ACTION|>[\n    {WEATHER}\n]<|END_ACTION|>",
    THOUGHT + f"<|START_ACTION|>[\n    {WEATHER},\n    {TIME}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>",
    f"<|START_ACTION|>[{WEATHER}]<|END_ACTION|>",
    '<|END_THINKING|><|START_ACTION|>[{ , "tool_name": "get_time", "parameters": {}}]<|END_ACTION|>',
    '<|END_THINKING|><|START_ACTION|>[{"tool_name": "get_time", "parameters": {}}]<|END_ACTION|>',
    "<|END_THINKING|><|START_TEXT|>Unclosed text",
    "Thinking without an end<|START_TEXT|>Hi<|END_TEXT|>",
    THOUGHT + "<|START_TEXT|>Hi<|END_TEXT|> trailing",
)


NOTHING_SHOWN = 'llama.cpp {"content": "", "reasoning_content": "", "tool_calls": []})'


def shown_by_stream(difference: str) -> bool:
    """A whole read of a cut-off reply that llama.cpp cannot parse (its read shows nothing), where the project
    parser shows what its character-by-character stream showed last (reply.reader's Replay rule)."""
    return " whole partial=1 " in difference and difference.endswith(NOTHING_SHOWN)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character; the
    grammar takes only text or calls after the thought, so some cut-off fuzz replies fail llama.cpp's read."""
    tally = compare(oracle, "Cohere2MoE.jinja", EXTRA, "cohere2moe", stream_every=8)
    assert [d for d in tally.differences if not shown_by_stream(d)] == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 30
