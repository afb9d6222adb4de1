"""A Hugging Face-like jinja2 environment that renders chat templates as transformers does."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from types import FrameType
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import SandboxedEnvironment

from chatparity.compiled import from_source
from chatparity.model import PINNED_NOW


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


class JoinedUndefined(jinja2.Undefined):
    """An undefined variable joined to a string with `+` is the string, as llama.cpp's engine joins it (FireFunction
    v2 adds the `functions` it never sets to its system prompt)."""

    def __add__(self, other: Any) -> Any:
        """`undefined + text` is the text."""
        return other if isinstance(other, str) else self._fail_with_undefined_error()

    def __radd__(self, other: Any) -> Any:
        """`text + undefined` is the text."""
        return other if isinstance(other, str) else self._fail_with_undefined_error()


class TemplateRaised(Exception):
    """The template called raise_exception(message)."""


class RenderBounds(Exception):
    """A render ran longer, or wrote more, than a chat prompt can need."""


RENDER_SECONDS = 20.0
RENDER_CHARS = 2_000_000
RENDER_ERRORS = (
    jinja2.TemplateError,
    TemplateRaised,
    RenderBounds,
    TypeError,
    ValueError,
    LookupError,
    AttributeError,
    ArithmeticError,
    RecursionError,
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
    """The HF-like environment; sandboxed but mutable, as llama.cpp lets Kimi's templates append to lists, with
    undefined variables joined to strings as llama.cpp joins them; not optimized (constant folding costs more
    when compiling a template than it saves in its few renders)."""
    env = SandboxedEnvironment(
        optimized=False,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=JoinedUndefined,
        extensions=[GenerationTag, loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


@lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """The compiled template for a source text (compiled once per machine, `chatparity.compiled`)."""
    return from_source(environment(), source, Path(__file__))


@contextmanager
def time_bound(seconds: float, name: str) -> Iterator[None]:
    """Raise RenderBounds naming the template if the block runs longer than `seconds` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: FrameType | None) -> None:
        raise RenderBounds(f"{name}: rendering took longer than {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def render(source: str, context: dict[str, Any], name: str = "the template") -> str:
    """Render a template source with a context, bounded in time and output size (RenderBounds names `name`)."""
    chunks: list[str] = []
    size = 0
    with time_bound(RENDER_SECONDS, name):
        for chunk in compile_template(source).generate(**context):
            size += len(chunk)
            if size > RENDER_CHARS:
                raise RenderBounds(f"{name}: rendering wrote more than {RENDER_CHARS} characters")
            chunks.append(chunk)
    return "".join(chunks)


def error_text(error: Exception) -> str:
    """A one-line description of a render error: its class and message."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}"
