"""A hand-made corpus for the sweep's tests: two upstream templates, three sessions, written replies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatparity.model import Message, Mode, Reply, Session, ToolCall, ToolMode
from corpora.jinja_env import render
from corpora.planning import PlannedSession
from corpora.tools import GET_WEATHER
from templates.index import TemplateEntry

TEMPLATES = Path.home() / ".cache" / "chatparity" / "0.3.36" / "llama.cpp" / "models" / "templates"
QWEN3 = "Qwen-Qwen3-0.6B.jinja"
LLAMA31 = "meta-llama-Llama-3.1-8B-Instruct.jinja"

ENTRIES = {
    QWEN3: TemplateEntry(
        QWEN3,
        "",
        "qwen3",
        "hermes",
        think_start="<think>",
        think_end="</think>",
        markers=("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"),
    ),
    LLAMA31: TemplateEntry(
        LLAMA31,
        "",
        "llama3",
        "llama31",
        markers=("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"),
    ),
}
USER = ({"role": "user", "content": "What's the weather in Rio?"},)
RIO = ToolCall("get_weather", '{"city": "Rio", "days": 4}')
PARIS = ToolCall("get_weather", '{"city": "Paris"}')


def planned(template: str, thinking: bool, tools: ToolMode) -> PlannedSession:
    """A single-turn session of an upstream template with its jinja2 prompt."""
    source = (TEMPLATES / template).read_text(encoding="utf-8")
    session = Session(
        template=template,
        template_source=source,
        template_sha256=template,
        bos="",
        eos="",
        mode=Mode(thinking, tools),
        conversation="single",
        messages=USER,
        tool_defs=(GET_WEATHER,),
    )
    context = {
        "messages": list(USER),
        "tools": session.tools or None,
        "add_generation_prompt": True,
        "enable_thinking": thinking,
        "bos_token": "",
        "eos_token": "",
    }
    prompt = render(source, context)
    return PlannedSession(Session(**{**vars(session), "prompt": prompt}), ENTRIES[template], "", False)


def qwen_call(call: ToolCall) -> str:
    """A Hermes-style call block."""
    return f'<tool_call>\n{{"name": "{call.name}", "arguments": {call.arguments}}}\n</tool_call>'


QWEN_REPLIES = (
    Reply(
        "<think>\nThe user wants Rio.\n</think>\n\n" + qwen_call(RIO),
        False,
        "hand",
        "call",
        Message("", "The user wants Rio.\n", (RIO,)),
    ),
    Reply(
        "<think>\nTwo cities.\n</think>\n\n" + qwen_call(RIO) + "\n" + qwen_call(PARIS),
        False,
        "hand",
        "calls",
        Message("", "Two cities.\n", (RIO, PARIS)),
    ),
    Reply(
        "<think>\nSunny.\n</think>\n\nIt is sunny in Rio.",
        False,
        "hand",
        "thought",
        Message("It is sunny in Rio.", "Sunny.\n"),
    ),
    Reply("Rio: 30°C, 東京 clear.", False, "hand", "content", Message("Rio: 30°C, 東京 clear.")),
    Reply(
        '<think>\nLet me see.\n</think>\n\n<tool_call>\n{"name": "get_weather", "argu',
        True,
        "hand",
        "cut_call",
    ),
)
LLAMA_REPLIES = (
    Reply(
        '{"name": "get_weather", "parameters": {"city": "Rio", "days": 4}}',
        False,
        "hand",
        "call",
        Message("", "", (RIO,)),
    ),
    Reply("It is sunny.", False, "hand", "content", Message("It is sunny.")),
)


def plan(config: Any) -> list[PlannedSession]:
    """The hand-made sessions, narrowed by the run's template glob."""
    import fnmatch

    sessions = [
        planned(QWEN3, True, ToolMode.AUTO),
        planned(QWEN3, True, ToolMode.PARALLEL),
        planned(LLAMA31, False, ToolMode.AUTO),
    ]
    return [
        p for p in sessions if not config.templates or fnmatch.fnmatch(p.session.template, config.templates)
    ]


def replies(planned: PlannedSession, profile: str) -> list[Reply]:
    """The hand-written replies of a session."""
    return list(QWEN_REPLIES if planned.session.template == QWEN3 else LLAMA_REPLIES)
