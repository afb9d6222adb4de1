"""The Solar Open reader (autoparser, `<|tool_calls|><|tool_call:begin|>id<|tool_call:name|>x<|tool_call:args|>{…}
<|tool_call:end|><|calls|>`, answers in <|content|>…<|end|>) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

NAME = "<|tool_call:name|>get_weather<|tool_call:args|>"
ARGS = '{"city": "Rio", "days": 4}'
CALL = f"<|tool_calls|><|tool_call:begin|>call00001{NAME}{ARGS}<|tool_call:end|><|calls|>"
EXTRA = (
    CALL,
    CALL.replace("call00001", "call_7"),
    "<|content|>It is sunny in Rio.<|end|>",
    "<|content|>It is sunny in Rio.",
    "It is sunny in Rio.",
    "Checking. " + CALL,
)
WHOLE, STREAMED, WITH_CALLS = 1400, 100, 130


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "upstage-Solar-Open-100B.jinja", EXTRA, "solar_open", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
