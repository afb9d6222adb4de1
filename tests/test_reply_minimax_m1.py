"""The MiniMax-M1 reader (autoparser, `<tool_calls>\n{"name": …, "arguments": {…}}\n</tool_calls>`) against
llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}'
TIME = '{"name": "get_time", "arguments": {}}'
EXTRA = (
    f"<tool_calls>\n{WEATHER}\n</tool_calls>",
    f"<tool_calls>\n{WEATHER}\n{TIME}\n</tool_calls>",
    f"<tool_calls>\n{WEATHER},\n{TIME}\n</tool_calls>",
    f"Checking.\n<tool_calls>\n{WEATHER}\n</tool_calls>",
    f"<tool_calls>\n{WEATHER}\n</tool_calls> trailing",
    "An answer without calls",
)
WHOLE, STREAMED, WITH_CALLS = 600, 50, 200


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "MiniMax-M1.jinja", EXTRA, "minimax_m1", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
