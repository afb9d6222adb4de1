"""Opening readers: the syntax is chosen from the template itself; templates no syntax reads are refused;
the harness factory follows the parser protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import reply
from reply.harness import factory
from templates.index import load_index, template_source
from tests.reply_support import SYNTAX_TEMPLATES, session

QWEN_LIKE = """{%- for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{%- if m.tool_calls %}{%- for c in m.tool_calls %}<tool_call>
{{ {"name": c.function.name, "arguments": c.function.arguments} | tojson }}
</tool_call>{%- endfor %}{%- endif %}
{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant
{%- endif %}"""


@dataclass
class FakeSession:
    """A duck-typed session, as a server would hold one."""

    template_source: str
    bos: str = ""
    eos: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str = "auto"
    parallel_tool_calls: bool = False
    enable_thinking: bool = True
    kwargs: dict[str, Any] = field(default_factory=dict)
    reasoning_format: str = "deepseek"
    messages: list[dict[str, Any]] = field(default_factory=lambda: [{"role": "user", "content": "Hi"}])


@pytest.mark.parametrize("syntax,template", [(s, n) for s, names in SYNTAX_TEMPLATES.items() for n in names])
def test_each_template_gets_its_syntax(syntax: str, template: str) -> None:
    """Every first-pass template is read by the syntax the families map names."""
    entry = load_index()[template]
    found = reply.open(FakeSession(template_source(template, "0.3.36"), entry.bos, entry.eos))
    assert found.syntax.name == syntax


@pytest.mark.parametrize("template", ["Apertus-8B-Instruct.jinja", "Kimi-K2-Instruct.jinja",
                                      "fireworks-ai-llama-3-firefunction-v2.jinja", "MiniMax-M2.jinja"])
def test_unread_templates_are_unsupported(template: str) -> None:
    """A template whose syntax is not implemented is refused at open, never read as content."""
    entry = load_index()[template]
    with pytest.raises(reply.Unsupported, match="no reply syntax"):
        reply.open(FakeSession(template_source(template, "0.3.36"), entry.bos, entry.eos))


def test_an_unknown_template_reusing_a_known_format_is_read() -> None:
    """A new template that writes hermes calls is read as hermes, with no code change."""
    tools = list(session("Qwen-Qwen3-0.6B.jinja", "think/auto").tool_defs)
    reader = reply.open(FakeSession(QWEN_LIKE, tools=tools))
    message = reader.parse('<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')
    assert reader.syntax.name == "hermes" and message.tool_calls[0].name == "get_time"


def test_an_unknown_format_is_unsupported() -> None:
    """A template with tool calls in a format no syntax knows is refused."""
    source = QWEN_LIKE.replace("<tool_call>", "<<call>>").replace("</tool_call>", "<</call>>")
    with pytest.raises(reply.Unsupported):
        reply.open(FakeSession(source))


def test_factory_follows_the_parser_protocol() -> None:
    """factory() -> Parser; open -> Reader with parse and stream (feed, finish)."""
    reader = factory().open(session("GLM-4.6.jinja", "think/auto"))
    text = "<think>hm</think>Hello"
    stream = reader.stream()
    snapshots = [stream.feed(c) for c in text]
    assert snapshots[-1].content.startswith("Hel") and stream.finish() == reader.parse(text)
