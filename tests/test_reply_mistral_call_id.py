"""The Mistral Small 3.2 reader (autoparser, `[CALL_ID]`) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '[TOOL_CALLS]get_weather[ARGS][CALL_ID]abcDEF123[ARGS]{"city": "Rio", "days": 4}'
EXTRA = (
    WEATHER,
    "Let me check. " + WEATHER,
    WEATHER + '[TOOL_CALLS]get_time[ARGS][ARGS]{}',
    '[TOOL_CALLS]get_time[ARGS][ARGS] {}',
    '[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Rio"}',
    WEATHER + "\nDone.",
    '[TOOL_CALLS]launch_rocket[ARGS][ARGS]{}',
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "Mistral-Small-3.2-24B-Instruct-2506.jinja", EXTRA, "mistral_call_id")
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 20
