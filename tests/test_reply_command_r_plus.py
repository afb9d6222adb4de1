"""The Command R+ reader (autoparser, content wrapped in <|CHATBOT_TOKEN|>…<|END_OF_TURN_TOKEN|>) against llama.cpp,
whole and streamed; jinja2 cannot render its sessions with tools, which open as RenderFailed."""

from __future__ import annotations

import pytest

import reply
from corpora import catalog
from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

TEMPLATE = "CohereForAI-c4ai-command-r-plus-tool_use.jinja"
EXTRA = (
    "<|CHATBOT_TOKEN|>It is sunny in Rio.<|END_OF_TURN_TOKEN|>",
    "Grounded answer: <|CHATBOT_TOKEN|>Sunny.<|END_OF_TURN_TOKEN|>",
    "<|CHATBOT_TOKEN|>Unclosed answer",
    "A bare answer",
    "<|CHATBOT_TOKEN|>Hi<|END_OF_TURN_TOKEN|> trailing",
)
WHOLE, STREAMED = 50, 5


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, TEMPLATE, EXTRA, "command_r_plus", stream_every=8, modes=("*/none*",))
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED


def test_sessions_with_tools_are_render_failures() -> None:
    """jinja2 cannot render the template with OpenAI-style tools (it reads tool.description): the session
    opens as RenderFailed, never as an unsupported template."""
    planned = [p for p in catalog.plan("quick", templates=TEMPLATE) if p.session.tools]
    assert planned
    for plan in planned:
        with pytest.raises(reply.RenderFailed, match="does not render with jinja2"):
            reply.open(plan.session)
