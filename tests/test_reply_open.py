"""Opening readers: the syntax is chosen from the template itself; templates no syntax reads are refused;
the harness factory follows the parser protocol."""

from __future__ import annotations

import pkgutil
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

import reply
from reply import syntaxes
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
PUBLIC = ("Delta", "Message", "Problem", "Reader", "Rejected", "RenderFailed", "Stream", "ToolCall", "ToolCallDelta",
          "Unsupported", "applied", "open")


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


def test_a_star_import_takes_every_public_name() -> None:
    """`from reply import *` takes the library's public names (`__all__`), each one the package defines."""
    assert sorted(reply.__all__) == sorted(PUBLIC)
    assert all(hasattr(reply, name) for name in reply.__all__)


def test_a_template_whose_syntax_is_missing_is_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the module of its syntax a template is refused at open, never read as content."""
    entry = load_index()["Qwen3-Coder.jinja"]
    others = tuple(s for s in syntaxes.registered() if s.name != "qwen3_coder")
    monkeypatch.setattr(syntaxes, "registered", lambda: others)
    with pytest.raises(reply.Unsupported, match="no reply syntax"):
        reply.open(FakeSession(template_source(entry.name, "0.3.36"), entry.bos, entry.eos))


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


def test_every_syntax_module_is_named_like_its_syntax_and_index_entries() -> None:
    """A module file, its `Syntax.name` and the index's `syntax` of every template it reads are one name."""
    modules = {info.name for info in pkgutil.iter_modules(syntaxes.__path__)}
    assert {s.name for s in syntaxes.registered()} == modules
    index_names = {entry.syntax for entry in load_index().values()}
    assert modules <= index_names, f"syntax modules no template is indexed under: {modules - index_names}"
    for entry in load_index().values():
        try:
            found = reply.open(FakeSession(template_source(entry.name, "0.3.36"), entry.bos, entry.eos))
        except reply.Unsupported:
            continue
        assert found.syntax.name == entry.syntax, entry.name


def test_two_syntax_modules_with_one_name_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second module registering an existing syntax's name is refused, naming the module."""
    twin = types.ModuleType("reply.syntaxes.hermes_again")
    twin.SYNTAX = next(s for s in syntaxes.registered() if s.name == "hermes")  # type: ignore[attr-defined]
    listed = list(pkgutil.iter_modules(syntaxes.__path__))
    monkeypatch.setitem(sys.modules, "reply.syntaxes.hermes_again", twin)
    monkeypatch.setattr(pkgutil, "iter_modules", lambda path: [*listed, listed[0]._replace(name="hermes_again")])
    syntaxes.registered.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"hermes_again\.py names its syntax 'hermes'"):
            syntaxes.registered()
    finally:
        syntaxes.registered.cache_clear()
