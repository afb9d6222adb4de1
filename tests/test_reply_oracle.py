"""The project parser against llama.cpp on every template the index assigns to an implemented syntax, read by
the harness's own runner: each template's replies and its own call turns whole (finished and cut off), and
for the first template of each syntax every finished reply fed one character at a time."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import conform
from tests.reply_support import MODES, SYNTAX_TEMPLATES, replies

pytestmark = pytest.mark.oracle

ALL = [(syntax, name) for syntax, names in SYNTAX_TEMPLATES.items() for name in names]
STREAMED = {names[0] for names in SYNTAX_TEMPLATES.values()}


@pytest.mark.parametrize("syntax,template", ALL)
def test_reads_as_llama_cpp(syntax: str, template: str) -> None:
    """Every reply reads as llama.cpp reads it (a cut-off one as llama-server shows it after streaming it,
    a marker still arriving held back); streamed, the parser's snapshots only grow and end on its whole read."""
    streamed = template in STREAMED
    tally = conform(
        template,
        syntax,
        lambda planned: replies(planned.session),
        modes=MODES,
        stream_every=1 if streamed else 0,
        corpus=False,
        reasoning_none=False,
        conversation="single",
    )
    assert tally.differences == []
    assert tally.whole > 100
    assert tally.streamed > (20 if streamed else -1)
