"""The jinja2 render of a chat: the context llama.cpp gives a template, in the HF-like environment."""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any

from corpora.jinja_env import pinned_clock, render
from templates.index import TemplateEntry


def template_messages(
    entry: TemplateEntry, messages: list[dict[str, Any]] | tuple[dict[str, Any], ...]
) -> list[dict[str, Any]]:
    """Messages as llama.cpp hands them over: string arguments, system merged, empty content, where needed."""
    out = copy.deepcopy(list(messages))
    for message in out:
        if "tool_calls" in message:
            message.setdefault("content", "")
            if not entry.object_arguments:
                for call in message["tool_calls"]:
                    arguments = call["function"]["arguments"]
                    if not isinstance(arguments, str):
                        call["function"]["arguments"] = json.dumps(
                            arguments, ensure_ascii=False, separators=(",", ":")
                        )
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
    tools and kwargs themselves become variables (a template may change them: pass values of this render's
    own, as `_render_json` does)."""
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


def render_chat(
    entry: TemplateEntry,
    source: str,
    messages: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    tools: list[dict[str, Any]],
    thinking: bool,
    kwargs: dict[str, Any],
    add_generation_prompt: bool,
) -> str:
    """The jinja2 render of a chat under a template (memoised: sessions and turns share their history)."""
    return _render_json(
        entry,
        source,
        json.dumps(list(messages), ensure_ascii=False),
        json.dumps(list(tools), ensure_ascii=False),
        thinking,
        json.dumps(kwargs, ensure_ascii=False),
        add_generation_prompt,
    )


@lru_cache(maxsize=4096)
def _render_json(
    entry: TemplateEntry,
    source: str,
    messages: str,
    tools: str,
    thinking: bool,
    kwargs: str,
    add_generation_prompt: bool,
) -> str:
    """render_chat with its inputs as order-preserving JSON texts (hashable for the cache)."""
    context = render_context(
        entry, json.loads(messages), json.loads(tools), thinking, json.loads(kwargs), add_generation_prompt
    )
    return render(source, context, entry.name)
