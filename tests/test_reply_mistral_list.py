"""The Mistral Nemo reader (autoparser, `[TOOL_CALLS][{…}]`) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}, "id": "abcDEF123"}'
EXTRA = (
    f"[TOOL_CALLS][{WEATHER}]",
    f'[TOOL_CALLS] [{WEATHER}, {{"name": "get_time", "arguments": {{}}, "id": 7}}]',
    '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Rio"}}]',
    f"Checking. [TOOL_CALLS][{WEATHER}]",
    f"[TOOL_CALLS][{WEATHER}] trailing",
    "An answer with [TOOL_CALLS in it",
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "mistralai-Mistral-Nemo-Instruct-2407.jinja", EXTRA, "mistral_list")
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 30
