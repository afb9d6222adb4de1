"""The FireFunction v2 reader (autoparser, ` functools[{"name": …, "arguments": {…}}]`): its template adds the
`functions` it is never given to its system prompt, which jinja2 renders as llama.cpp does (an undefined
variable joined to a string is the string), so its sessions open and read replies as llama.cpp reads them."""

from __future__ import annotations

import pytest

import reply
from corpora import catalog
from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

TEMPLATE = "fireworks-ai-llama-3-firefunction-v2.jinja"
WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}'
EXTRA = (
    f" functools[{WEATHER}]",
    f'functools[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]',
    f"Let me check. functools[{WEATHER}]",
    f" functools[{WEATHER}] trailing",
    "It is sunny in Rio.",
    ' functools[{"name": "get_weather", "arguments": "Rio"}]',
)
WHOLE, STREAMED, WITH_CALLS = 900, 60, 300


def test_sessions_render_as_llama_cpp_renders_them(oracle) -> None:
    """Every session renders in jinja2, to llama.cpp's own prompt, and the project parser opens it."""
    planned = catalog.plan("quick", templates=TEMPLATE)
    assert planned
    for plan in planned:
        assert plan.jinja_error == ""
        assert plan.session.prompt == oracle.render(plan.session.render_request()).prompt, plan.session.mode
        assert reply.open(plan.session).syntax.name == "firefunction"


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, TEMPLATE, EXTRA, "firefunction", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
