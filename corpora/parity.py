"""Prompt parity: the jinja2 prompt of a session against the prompt llama.cpp's own engine renders."""

from __future__ import annotations

from chatparity.model import common_prefix_length
from corpora.planning import PlannedSession

EQUAL = "equal"


def first_difference(first: str, second: str) -> int:
    """The code-point offset of the first difference of two different texts."""
    return common_prefix_length(first, second)


def prompt_parity(planned: PlannedSession, oracle_prompt: str | None, oracle_error: str = "") -> str:
    """equal, differs@OFFSET, jinja2_fails/oracle_fails/both_fail: MSG (oracle_prompt None when it failed)."""
    jinja_prompt = planned.session.prompt
    if jinja_prompt is None and oracle_prompt is None:
        return f"both_fail: jinja2: {planned.jinja_error}; oracle: {oracle_error}"
    if jinja_prompt is None:
        return f"jinja2_fails: {planned.jinja_error}"
    if oracle_prompt is None:
        return f"oracle_fails: {oracle_error}"
    if jinja_prompt == oracle_prompt:
        return EQUAL
    return f"differs@{first_difference(jinja_prompt, oracle_prompt)}"
