"""The Llama 3.1 / 3.2 / 3.3 reader (autoparser, bare JSON calls) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"name": "get_weather", "parameters": {"city": "Rio", "days": 4}}'
EXTRA = (
    WEATHER,
    '{"type": "function", "name": "get_weather", "parameters": {"city": "Rio"}}',
    "<|python_tag|>" + WEATHER,
    "Let me look that up. " + WEATHER,
    WEATHER + "\n" + '{"name": "get_time", "parameters": {}}',
    "Sets look like {1, 2}.",
    '{"name": "get_weather", "arguments": {"city": "Rio"}}',
)


@pytest.mark.parametrize("template,modes", [("meta-llama-Llama-3.1-8B-Instruct.jinja", ("*",)),
                                            ("meta-llama-Llama-3.2-3B-Instruct.jinja", ("think/*",)),
                                            ("meta-llama-Llama-3.3-70B-Instruct.jinja", ("nothink/*",))])
def test_reads_as_llama_cpp(oracle, template: str, modes: tuple[str, ...]) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, template, EXTRA, "llama31", modes=modes)
    assert tally.differences == []
    assert tally.whole > 100 and tally.streamed > 20 and tally.with_calls > 20
