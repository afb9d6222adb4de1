"""The MiniMax-M2 reader (autoparser, `<minimax:tool_call>\n<invoke name="x">\n<parameter name="k">v</parameter>…`)
against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

CALL = (
    '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Rio</parameter>\n'
    '<parameter name="days">4</parameter>\n</invoke>\n</minimax:tool_call>'
)
EXTRA = (
    "The user wants weather.\n</think>\n\n" + CALL,
    "Short.</think>" + CALL,
    "Thought.\n</think>\n\nIt is sunny.",
    CALL,
    "x</think>\n" + CALL.replace(">Rio<", ">Rio de\nJaneiro<"),
    "x</think>\n" + CALL.replace(">4<", ">four<"),
    "Unfinished thought",
)
WHOLE, STREAMED, WITH_CALLS = 800, 50, 250


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "MiniMax-M2.jinja", EXTRA, "minimax_m2", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
