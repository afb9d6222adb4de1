"""The Functionary v3.2 reader (route functionary_v3_2, `>>>all\n` content and `>>>x\n{json}` calls) against
llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = 'get_weather\n{"city": "Rio", "days": 4}'
EXTRA = (
    "all\nIt is sunny in Rio.",
    WEATHER,
    WEATHER + 'get_time\n{}',
    WEATHER + '\n>>>get_time\n{}',
    "all\nLet me check.\n>>>" + WEATHER,
    "all\nLet me check." + WEATHER,
    'launch_rocket\n{"city": "Rio"}',
    "all\n",
    "nobody\nHello",
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "meetkai-functionary-medium-v3.2.jinja", EXTRA, "functionary_v3_2", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 200 and tally.streamed > 40 and tally.with_calls > 30
