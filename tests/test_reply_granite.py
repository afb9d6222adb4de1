"""The Granite 3.3 reader (autoparser with llama.cpp's patch: <think>…</think> reasoning, everything else content)
against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

EXTRA = (
    "<think>The user greets me.</think><response>Hello!</response>",
    "<think>Thought.</think>Hello!",
    "<response>Hello!</response>",
    '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Rio"}}]',
    "<think>Unfinished thought",
)
WHOLE, STREAMED = 1100, 75


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "ibm-granite-granite-3.3-2B-Instruct.jinja", EXTRA, "granite", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED
