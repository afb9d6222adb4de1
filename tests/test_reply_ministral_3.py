"""The Ministral 3 / Devstral reader (route ministral_3) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '[TOOL_CALLS]get_weather[ARGS]{"city": "Rio", "days": 4}'
EXTRA = (
    "[THINK]The user wants weather.[/THINK]Let me check." + WEATHER,
    "[THINK]plan[/THINK]\n\n" + WEATHER + '[TOOL_CALLS]get_time[ARGS]{}',
    WEATHER + " and then some text",
    '[TOOL_CALLS]launch_rocket[ARGS]{"to": "moon"}',
    "[THINK]cut inside the thought",
    "Plain answer with [brackets] and {braces}.",
    '[TOOL_CALLS]get_weather[ARGS] {"city": "Rio"}',
)


@pytest.mark.parametrize("template", ["mistralai-Ministral-3-14B-Reasoning-2512.jinja",
                                      "unsloth-mistral-Devstral-Small-2507.jinja"])
def test_reads_as_llama_cpp(oracle, template: str) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, template, EXTRA, "ministral_3")
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 50
