"""The Hy3 reader (autoparser, GLM-like tags with an `:opensource` suffix) against llama.cpp, whole and
streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

CALL = (
    "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
    "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Rio</arg_value:opensource>\n"
    "<arg_key:opensource>days</arg_key:opensource>\n<arg_value:opensource>4</arg_value:opensource>\n"
    "</tool_call:opensource>\n</tool_calls:opensource>"
)
EXTRA = (
    CALL,
    "Let me check.\n" + CALL,
    "<think:opensource>Thought.</think:opensource>It is sunny.",
    CALL.replace("Rio", "Rio de\nJaneiro"),
    CALL.replace(">4<", ">four<"),
    CALL + " trailing",
    "Plain answer",
)
WHOLE, STREAMED, WITH_CALLS = 2000, 130, 550


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "tencent-Hy3.jinja", EXTRA, "hy3", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
