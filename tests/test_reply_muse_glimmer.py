"""The Muse Glimmer reader (route muse_glimmer, <atem:function_calls>) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

CALL = (' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
        '<atem:parameter name="city">Rio</atem:parameter>\n<atem:parameter name="days">4</atem:parameter>\n'
        "</atem:invoke>\n</atem:function_calls>")
THOUGHT = " to=self<|message|>Need the weather.<|eom|><|start|>assistant"
EXTRA = (
    THOUGHT + " to=user<|message|>It is sunny.<|eot|>",
    THOUGHT + CALL,
    " to=user<|message|>Checking.<|eom|><|start|>assistant" + CALL,
    CALL + "<|eom|><|start|>assistant" + CALL.replace("Rio", "Oslo"),
    CALL.replace('"days">4<', '"days">"4"<'),
    "<|message|>No recipient.",
    ' to=get_time<|message|><atem:function_calls><atem:invoke name="get_time"></atem:invoke></atem:function_calls>',
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "muse-glimmer.jinja", EXTRA, "muse_glimmer", stream_every=12)
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 80
