"""The GigaChat 3 reader (route gigachat_v3, a `function call<|role_sep|>` message holding
{"name", "arguments"}) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

CALL = '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "get_weather", "arguments": {"days": 4, "city": "Rio"}}'
EXTRA = (
    "It is sunny in Rio.",
    CALL,
    "Let me check." + CALL,
    "Let me check.\n" + CALL + "<|message_sep|>\n\n",
    CALL + CALL.replace("Rio", "Oslo"),
    CALL.replace('"name": "get_weather", ', ""),
    '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "launch_rocket", "arguments": {}}',
    "Answer<|message_sep|>\n\n",
    '<|message_sep|>\n\nfunction call<|role_sep|>\n{ "name" : "get_time" , "arguments" : { } }',
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "GigaChat3-10B-A1.8B.jinja", EXTRA, "gigachat_v3", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 200 and tally.streamed > 40 and tally.with_calls > 20
