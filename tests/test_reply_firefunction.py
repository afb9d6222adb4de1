"""The FireFunction v2 reader (autoparser, ` functools[{"name": …, "arguments": {…}}]`): jinja2 cannot render the
template, so every session opens as RenderFailed; given llama.cpp's own generation prompt, its grammar reads
replies as llama.cpp reads them."""

from __future__ import annotations

import pytest

import reply
from chatparity.model import Message, Rejection
from corpora import catalog
from reply.reader import Reader
from reply.request import Request
from reply.syntaxes import select
from reply.template import Template
from tests.reply_support import normal

pytestmark = pytest.mark.oracle

TEMPLATE = "fireworks-ai-llama-3-firefunction-v2.jinja"
WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}'
REPLIES = (
    f" functools[{WEATHER}]",
    f'functools[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]',
    f"Let me check. functools[{WEATHER}]",
    f" functools[{WEATHER}] trailing",
    "It is sunny in Rio.",
    ' functools[{"name": "get_weather", "arguments": "Rio"}]',
)


def test_every_session_is_a_render_failure() -> None:
    """No session renders with jinja2 ('functions' is undefined): each opens as RenderFailed."""
    planned = catalog.plan("quick", templates=TEMPLATE)
    assert planned
    for plan in planned:
        with pytest.raises(reply.RenderFailed, match="'functions' is undefined"):
            reply.open(plan.session)


def test_grammar_reads_as_llama_cpp(oracle) -> None:
    """With llama.cpp's generation prompt, finished and cut-off replies read as llama.cpp reads them."""
    compared = 0
    for plan in catalog.plan("quick", templates=TEMPLATE):
        session = plan.session
        template = Template(session.template_source, session.bos, session.eos)
        rendered = oracle.render(session.render_request())
        request = Request(
            tools=session.tools,
            tool_choice=session.tool_choice,
            parallel=session.parallel_tool_calls,
            extract_reasoning=session.reasoning_format != "none",
            enable_thinking=session.enable_thinking,
            generation_prompt=rendered.generation_prompt,
        )
        syntax = select(template)
        assert syntax is not None and syntax.name == "firefunction"
        reader = Reader(syntax, template, request)
        for text in REPLIES:
            expected = oracle.parse(rendered.handle, text)
            try:
                got = reader.parse(text)
            except reply.Rejected:
                assert isinstance(expected, Rejection), (session.mode.label, text)
                continue
            assert isinstance(expected, Message), (session.mode.label, text, got)
            assert normal(got) == normal(expected), (session.mode.label, text)
            compared += 1
    assert compared > 20
