"""The project parser reads every upstream template: it opens every quick-profile session llama.cpp renders, so
a sweep has no `unsupported` row."""

from __future__ import annotations

import pytest

import reply
from corpora import catalog
from oracle.client import OracleError
from templates.index import load_index

pytestmark = pytest.mark.oracle


def test_every_session_llama_cpp_renders_opens(oracle) -> None:
    """A quick-profile session the project parser declines is one llama.cpp cannot render either (no rows);
    every indexed template opens in some session."""
    declined, opened = [], set()
    for planned in catalog.plan("quick"):
        try:
            reply.open(planned.session)
        except reply.Unsupported as error:
            try:
                oracle.render(planned.session.render_request())
            except OracleError:
                continue
            declined.append(f"{planned.session.template} {planned.session.mode.label}: {error}")
            continue
        opened.add(planned.session.template)
    assert declined == []
    assert opened == set(load_index())
