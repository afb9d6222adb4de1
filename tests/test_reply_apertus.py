"""The Apertus reader (autoparser, `<|tools_prefix|>[{"name": {…arguments…}}]<|tools_suffix|>`) against
llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"get_weather": {"city": "Rio", "days": 4}}'
EXTRA = (
    f"<|tools_prefix|>[{WEATHER}]<|tools_suffix|>",
    f'<|tools_prefix|>[{WEATHER}, {{"get_time": {{}}}}]<|tools_suffix|>',
    f"Let me check.<|tools_prefix|>[ {WEATHER} ]<|tools_suffix|>",
    f"<|tools_prefix|>[{WEATHER}]<|tools_suffix|> trailing",
    '<|tools_prefix|>[{"get_weather": "Rio"}]<|tools_suffix|>',
    "An answer that mentions <|tools_prefix|> only",
)
WHOLE, STREAMED, WITH_CALLS = 600, 45, 200


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "Apertus-8B-Instruct.jinja", EXTRA, "apertus", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
