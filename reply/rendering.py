"""Render a chat template with jinja2 the way llama.cpp feeds it: the probe renders the analysis needs and
the generation prompt (the prompt with add_generation_prompt minus the prompt without it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from chatparity.compiled import from_source
from chatparity.model import PINNED_NOW, common_prefix_length


class GenerationTag(Extension):
    """`{% generation %}…{% endgeneration %}` (HF's assistant-mask marker) renders its body unchanged."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 declares it as an instance attribute)

    def parse(self, parser: Any) -> Any:
        """Keep the body as it is."""
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body, lineno=lineno)


class JoinedUndefined(jinja2.Undefined):
    """An undefined variable joined to a string with `+` is the string, as llama.cpp's engine joins it (FireFunction
    v2 adds the `functions` it never sets to its system prompt)."""

    def __add__(self, other: Any) -> Any:
        """`undefined + text` is the text."""
        return other if isinstance(other, str) else self._fail_with_undefined_error()

    def __radd__(self, other: Any) -> Any:
        """`text + undefined` is the text."""
        return other if isinstance(other, str) else self._fail_with_undefined_error()


def _tojson(value: Any, indent: int | None = None, ensure_ascii: bool = False, sort_keys: bool = False) -> str:
    return json.dumps(_plain(value), ensure_ascii=ensure_ascii, indent=indent, sort_keys=sort_keys)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "__next__"):
        return [_plain(v) for v in value]
    return value


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


@lru_cache(maxsize=1)
def _environment() -> ImmutableSandboxedEnvironment:
    """The environment every template renders in: an immutable sandbox with tojson, raise_exception and undefined
    variables joined to strings as llama.cpp joins them."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, undefined=JoinedUndefined,
                                        extensions=[loopcontrols, GenerationTag])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env


@lru_cache(maxsize=256)
def _compile(source: str) -> jinja2.Template:
    """The compiled template for a source text (compiled once per machine, `chatparity.compiled`)."""
    return from_source(_environment(), source, Path(__file__))


def prepare_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """llama.cpp's message workarounds: content "" beside tool calls, JSON-string arguments as objects."""
    out = []
    for message in messages:
        message = dict(message)
        if "tool_calls" in message:
            if message.get("content") is None:
                message["content"] = ""
            calls = []
            for call in message["tool_calls"]:
                call = dict(call)
                function = dict(call.get("function", {}))
                if isinstance(function.get("arguments"), str):
                    try:
                        function["arguments"] = json.loads(function["arguments"])
                    except ValueError:
                        pass
                call["function"] = function
                calls.append(call)
            message["tool_calls"] = calls
        out.append(message)
    return out


def render(source: str, *, bos: str, eos: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
           add_generation_prompt: bool, enable_thinking: bool, extra: dict[str, Any] | None = None,
           now: str = PINNED_NOW) -> str:
    """One render; add_generation_prompt=False leaves the variable undefined, as llama.cpp does."""
    stamp = datetime.fromisoformat(now).astimezone(UTC)
    context: dict[str, Any] = {
        "messages": prepare_messages(messages),
        "bos_token": bos,
        "eos_token": eos,
        "enable_thinking": enable_thinking,
        "strftime_now": stamp.strftime,
        "datetime": stamp.strftime("%b %d %Y"),
        "date_string": stamp.strftime("%d %b %Y"),
    }
    if tools:
        context["tools"] = tools
    context.update(extra or {})
    if add_generation_prompt:
        context["add_generation_prompt"] = True
    return _compile(source).render(**context)


def generation_prompt(source: str, *, bos: str, eos: str, messages: list[dict[str, Any]],
                      tools: list[dict[str, Any]], enable_thinking: bool, extra: dict[str, Any] | None = None,
                      now: str = PINNED_NOW) -> str:
    """What add_generation_prompt appends: the render with it past the common prefix with the render without
    (worked out once per source and arguments that JSON writes and reads back unchanged)."""
    args = {"bos": bos, "eos": eos, "messages": messages, "tools": tools, "enable_thinking": enable_thinking,
            "extra": extra, "now": now}
    try:
        written = json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError):
        written = None
    if written is None or json.loads(written) != args:
        return _generation_prompt(source, args)
    return _written_generation_prompt(source, written)


@lru_cache(maxsize=256)
def _written_generation_prompt(source: str, written: str) -> str:
    """`generation_prompt` of arguments written as JSON."""
    return _generation_prompt(source, json.loads(written))


def _generation_prompt(source: str, args: dict[str, Any]) -> str:
    """`generation_prompt`, worked out."""
    without = render(source, add_generation_prompt=False, **args)
    with_gp = render(source, add_generation_prompt=True, **args)
    return with_gp[common_prefix_length(without, with_gp):]
