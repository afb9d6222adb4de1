"""Rendering a template is bounded in time and in output size, with an error naming the template."""

from __future__ import annotations

import pytest

from corpora import jinja_env

NESTED = "{% for i in range(100000) %}{% for k in range(100000) %}BODY{% endfor %}{% endfor %}"


def test_a_render_that_writes_too_much_names_the_template() -> None:
    with pytest.raises(jinja_env.RenderBounds, match=r"big\.jinja: rendering wrote more than"):
        jinja_env.render(NESTED.replace("BODY", "xxxxxxxxxx"), {}, "big.jinja")


def test_a_render_that_runs_too_long_names_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jinja_env, "RENDER_SECONDS", 0.3)
    with pytest.raises(jinja_env.RenderBounds, match=r"slow\.jinja: rendering took longer than 0\.3s"):
        jinja_env.render(NESTED.replace("BODY", ""), {}, "slow.jinja")


def test_a_bounded_render_is_a_render_error_and_a_normal_one_is_unchanged() -> None:
    assert jinja_env.RenderBounds in jinja_env.RENDER_ERRORS
    assert jinja_env.render("a{{ x }}b", {"x": 1}) == "a1b"


def test_a_template_that_recurses_without_end_is_a_render_error() -> None:
    macro = "{% macro kind(spec) %}{% for t in spec %}{{ kind(t) }}{% endfor %}{% endmacro %}{{ kind('null') }}"
    with pytest.raises(jinja_env.RENDER_ERRORS):
        jinja_env.render(macro, {}, "recursive.jinja")
