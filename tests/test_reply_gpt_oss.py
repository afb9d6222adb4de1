"""The gpt-oss Harmony reader (route gpt_oss) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

THOUGHT = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
EXTRA = (
    THOUGHT + "<|channel|>final<|message|>It is sunny.",
    THOUGHT + ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Rio", "days": 4}',
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Rio"}',
    ("<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant"
     ' to=functions.get_time<|channel|>commentary<|message|>{}'),
    "<|channel|>commentary to=assistant<|channel|>final<|message|>Stray commentary first.",
    ' to=functions.launch_rocket<|channel|>commentary json<|message|>{}',
    ' to=browser.search<|channel|>commentary<|message|>{"q": "rio"}<|end|>',
    "<|channel|>final<|message|>Plain",
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "openai-gpt-oss-120b.jinja", EXTRA, "gpt_oss", stream_every=12)
    assert tally.differences == []
    assert tally.whole > 500 and tally.streamed > 60 and tally.with_calls > 100
