"""The jinja2 render of a chat: the context llama.cpp gives a template, in the HF-like environment."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from corpora.jinja_env import pinned_clock, render
from templates.index import TemplateEntry

THINKING_VARIABLE = "enable_thinking"


@dataclass(frozen=True)
class Chat:
    """A chat to render under a template, its messages, tools and kwargs as order-preserving JSON texts (hashable:
    the key its render is memoised by)."""

    entry: TemplateEntry
    source: str
    messages: str
    tools: str
    thinking: bool
    kwargs: str


THINKING_FIELD_SYNTAX = "gpt_oss"
"""The syntax whose templates read a message's reasoning as `thinking`: llama.cpp's gpt-oss parser copies it there."""


def json_text(value: Any) -> str:
    """The order-preserving JSON text of a render input."""
    return json.dumps(value, ensure_ascii=False)


def chat(
    entry: TemplateEntry,
    source: str,
    messages: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    tools: list[dict[str, Any]],
    thinking: bool,
    kwargs: dict[str, Any],
) -> Chat:
    """A chat from its messages, tools and kwargs; thinking off where the template never names enable_thinking (it
    renders the same either way, so a chat with thinking on shares the render of the one with it off)."""
    template_thinking = thinking and THINKING_VARIABLE in source
    return Chat(
        entry, source, json_text(list(messages)), json_text(list(tools)), template_thinking, json_text(kwargs)
    )


def string_arguments(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call with its arguments as compact JSON text, as llama.cpp hands them to some templates."""
    arguments = call["function"]["arguments"]
    if isinstance(arguments, str):
        return call
    text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return {**call, "function": {**call["function"], "arguments": text}}


def template_messages(
    entry: TemplateEntry, messages: list[dict[str, Any]] | tuple[dict[str, Any], ...]
) -> list[dict[str, Any]]:
    """Messages as llama.cpp hands them over: string arguments, system merged, empty content, the reasoning also as
    `thinking` for gpt-oss, where needed (new message dicts; the values they keep are shared with `messages`)."""
    out = [dict(message) for message in messages]
    for message in out:
        if entry.syntax == THINKING_FIELD_SYNTAX and "reasoning_content" in message:
            message["thinking"] = message["reasoning_content"]
        if "tool_calls" in message:
            message.setdefault("content", "")
            if not entry.object_arguments:
                message["tool_calls"] = [string_arguments(call) for call in message["tool_calls"]]
    if not entry.system_role and out and out[0].get("role") == "system":
        first = out.pop(0)
        if out:
            out[0]["content"] = f"{first['content']}\n{out[0]['content']}"
    return out


def render_context(
    entry: TemplateEntry,
    messages: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    tools: list[dict[str, Any]],
    thinking: bool,
    kwargs: dict[str, Any],
    add_generation_prompt: bool,
) -> dict[str, Any]:
    """The variables llama.cpp sets, enable_thinking always and the date variables from the pinned clock; the
    messages' values, the tools and the kwargs themselves become variables (a template may change them: pass
    values of this render's own, as `rendered` does)."""
    now = pinned_clock()
    context: dict[str, Any] = {
        "messages": template_messages(entry, messages),
        "bos_token": entry.bos,
        "eos_token": entry.eos,
        "enable_thinking": thinking,
        "datetime": now.strftime("%b %d %Y"),
        "date_string": now.strftime("%d %b %Y"),
        "add_generation_prompt": add_generation_prompt,
    }
    if tools:
        context["tools"] = list(tools)
    context.update(kwargs)
    return context


@lru_cache(maxsize=4096)
def rendered(chat: Chat, add_generation_prompt: bool) -> str:
    """The jinja2 render of a chat (memoised: sessions and turns share their history), its variables parsed
    afresh from the chat's JSON texts for each render."""
    context = render_context(
        chat.entry,
        json.loads(chat.messages),
        json.loads(chat.tools),
        chat.thinking,
        json.loads(chat.kwargs),
        add_generation_prompt,
    )
    return render(chat.source, context, chat.entry.name)


def render_chat(
    entry: TemplateEntry,
    source: str,
    messages: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    tools: list[dict[str, Any]],
    thinking: bool,
    kwargs: dict[str, Any],
    add_generation_prompt: bool,
) -> str:
    """The jinja2 render of a chat under a template (memoised)."""
    return rendered(chat(entry, source, messages, tools, thinking, kwargs), add_generation_prompt)
