"""The MiniCPM5 reader (route minicpm5, `<function name="x"><param name="k">v</param></function>`, CDATA
strings) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '<function name="get_weather"><param name="city">Rio</param><param name="days">4</param></function>'
CODE = ('<function name="run_code"><param name="language">python</param>'
        '<param name="code"><![CDATA[if a < b:\n    print("</param>")\n]]></param></function>')
THOUGHT = "<think>\nThe user wants the weather.\n</think>\n\n"
EXTRA = (
    THOUGHT + WEATHER,
    THOUGHT + "Let me check.\n" + WEATHER + "\n" + CODE,
    THOUGHT + CODE,
    THOUGHT + '<function name="get_time"></function>',
    THOUGHT + '<function name="create_event"><param name="event">{"title": "Lunch"}</param>'
              '<param name="attendees">["a", "b"]</param></function>',
    THOUGHT + WEATHER.replace("4", "four"),
    THOUGHT + "It is sunny.",
    "<think></think>" + WEATHER,
    THOUGHT + WEATHER + " trailing",
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "openbmb-MiniCPM5-1B.jinja", EXTRA, "minicpm5", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 200 and tally.streamed > 40 and tally.with_calls > 30
