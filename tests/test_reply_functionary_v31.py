"""The Functionary v3.1 reader (autoparser with llama.cpp's patch, `<function=x>{…}</function>`) against llama.cpp,
whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '<function=get_weather>{"city": "Rio", "days": 4}</function>'
EXTRA = (
    WEATHER,
    WEATHER + "<function=get_time>{}</function>",
    WEATHER + "\n" + WEATHER,
    "Let me check. " + WEATHER,
    WEATHER + " trailing",
    "Plain answer",
)
WHOLE, STREAMED, WITH_CALLS = 650, 50, 200


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "meetkai-functionary-medium-v3.1.jinja", EXTRA, "functionary_v31", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
