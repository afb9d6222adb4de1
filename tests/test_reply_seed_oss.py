"""The Seed-OSS reader (autoparser, `<seed:tool_call>\n<function=x>\n<parameter=k>v</parameter>…`) against
llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

CALL = (
    "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Rio</parameter>\n<parameter=days>4</parameter>\n"
    "</function>\n</seed:tool_call>"
)
EXTRA = (
    "<seed:think>The user wants weather.</seed:think>\n" + CALL,
    CALL,
    CALL + "\n" + CALL.replace("Rio", "Oslo"),
    "<seed:think>Thought.</seed:think>It is sunny.",
    "Sure. " + CALL,
    "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Rio\nde Janeiro</parameter>\n</function>\n</seed:tool_call>",
    "<seed:think>Unfinished thought",
)
WHOLE, STREAMED, WITH_CALLS = 1500, 100, 500


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "ByteDance-Seed-OSS.jinja", EXTRA, "seed_oss", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
