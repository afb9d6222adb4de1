"""Prompt parity: the jinja2 prompt against llama.cpp's, and the HF-like environment it is rendered in."""

from __future__ import annotations

from typing import Any

import pytest

from corpora.jinja_env import TemplateRaised, render
from corpora.parity import prompt_parity
from corpora.planning import PlannedSession, plan
from oracle.client import OracleError


def parity(oracle: Any, item: PlannedSession) -> str:
    """The parity verdict of a session against the real oracle."""
    try:
        return prompt_parity(item, oracle.render(item.session.render_request()).prompt)
    except OracleError as error:
        return prompt_parity(item, None, str(error))


def first(template: str, label: str, conversation: str = "single") -> PlannedSession:
    """A quick-profile session."""
    return next(
        item
        for item in plan("quick", templates=template, mode=label)
        if item.session.conversation == conversation
    )


def test_parity_verdicts_against_the_oracle(oracle: Any) -> None:
    assert parity(oracle, first("Qwen-Qwen3-0.6B.jinja", "think/auto")) == "equal"
    assert (
        parity(oracle, first("openai-gpt-oss-120b.jinja", 'nothink/parallel/reasoning_effort="low"'))
        == "equal"
    )
    functionary = first("meetkai-functionary-medium-v3.1.jinja", "think/auto")
    verdict = parity(oracle, functionary)
    assert verdict.startswith("differs@")
    offset = int(verdict.split("@")[1])
    assert functionary.session.prompt[offset:].startswith("&#34;")
    assert parity(oracle, first("fireworks-ai-llama-3-firefunction-v2.jinja", "think/auto")) == "equal"
    assert parity(oracle, first("CohereForAI-c4ai-command-r-plus-tool_use.jinja", "think/auto")).startswith(
        "both_fail: jinja2: UndefinedError"
    )


def test_parity_formats_each_side_failing() -> None:
    item = first("GLM-4.6.jinja", "think/none")
    assert prompt_parity(item, item.session.prompt) == "equal"
    assert prompt_parity(item, item.session.prompt + "x") == f"differs@{len(item.session.prompt)}"
    assert prompt_parity(item, None, "boom") == "oracle_fails: boom"


def test_parity_across_all_quick_sessions_is_mostly_equal(oracle: Any) -> None:
    verdicts = [parity(oracle, item) for item in plan("quick", mode="think/auto")]
    equal = sum(verdict == "equal" for verdict in verdicts)
    assert equal >= 0.9 * len(verdicts), sorted(set(verdicts) - {"equal"})


def test_environment_behaves_as_hugging_face() -> None:
    assert render("{{ strftime_now('%Y-%m-%d %H:%M') }}", {}) == "2025-06-15 10:30"
    assert render("{{ x | tojson }}", {"x": {"a": "é"}}) == '{"a": "é"}'
    assert render("{{ x | tojson(indent=2) }}", {"x": [1]}) == "[\n  1\n]"
    assert render("{{ xs | map(attribute='a') | tojson }}", {"xs": [{"a": 1}, {"a": 2}]}) == "[1, 2]"
    assert render("{% generation %}kept{% endgeneration %}", {}) == "kept"
    assert (
        render("{% for x in xs %}{% if x > 1 %}{% break %}{% endif %}{{ x }}{% endfor %}", {"xs": [1, 2]})
        == "1"
    )
    assert render("{% if true %}\n  a\n{% endif %}\n", {}) == "  a\n"
    with pytest.raises(TemplateRaised, match="no system"):
        render("{{ raise_exception('no system') }}", {})
