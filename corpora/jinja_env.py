"""A Hugging Face-like jinja2 environment that renders chat templates as transformers does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import SandboxedEnvironment

from corpora.sessions import PINNED_NOW


class GenerationTag(Extension):
    """The `{% generation %}…{% endgeneration %}` tag of transformers, rendered as its body."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 declares it as an instance attribute)

    def parse(self, parser: Any) -> nodes.Node:
        """Parse the block and render its body unchanged."""
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller: Any) -> str:
        """The block's rendered body."""
        return caller()


class TemplateRaised(Exception):
    """The template called raise_exception(message)."""


RENDER_ERRORS = (
    jinja2.TemplateError,
    TemplateRaised,
    TypeError,
    ValueError,
    LookupError,
    AttributeError,
    ArithmeticError,
)


def raise_exception(message: str) -> None:
    """The template's own error, as transformers raises it."""
    raise TemplateRaised(message)


def tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """JSON as transformers' tojson writes it, non-ASCII kept, a lazy sequence as a list."""
    if isinstance(value, Iterator):
        value = list(value)
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def pinned_clock(now: str = PINNED_NOW) -> datetime:
    """The pinned clock as a datetime."""
    return datetime.fromisoformat(now)


def strftime_now(fmt: str) -> str:
    """The pinned clock formatted with strftime."""
    return pinned_clock().strftime(fmt)


@lru_cache(maxsize=1)
def environment() -> SandboxedEnvironment:
    """The HF-like environment; sandboxed but mutable, as llama.cpp lets Kimi's templates append to lists."""
    env = SandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


@lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """The compiled template for a source text."""
    return environment().from_string(source)


def render(source: str, context: dict[str, Any]) -> str:
    """Render a template source with a context."""
    return compile_template(source).render(**context)


def error_text(error: Exception) -> str:
    """A one-line description of a render error: its class and message."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}"
