"""Sessions and replies for the reply tests: real templates from the index, replies written by each
template itself (its own rendering of calls) plus hand-made variants, and reading normalisation."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import reply
from corpora.planning import plan
from corpora.sessions import Session
from harness.readings import Message as Reading
from harness.readings import Rejection
from reply.templating import render

SYNTAX_TEMPLATES: dict[str, tuple[str, ...]] = {
    "none": ("HuggingFaceTB-SmolLM3-3B.jinja", "google-gemma-2-2b-it.jinja", "llama-cpp-rwkv-world.jinja",
             "microsoft-Phi-3.5-mini-instruct.jinja", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"),
    "hermes": ("Qwen-Qwen2.5-7B-Instruct.jinja", "Qwen-QwQ-32B.jinja", "Qwen-Qwen3-0.6B.jinja",
               "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
               "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "MiMo-VL.jinja",
               "Bielik-11B-v3.0-Instruct.jinja", "Reka-Edge.jinja", "ibm-granite-granite-4.0.jinja",
               "ibm-granite-granite-4.1.jinja"),
    "xml": ("Qwen3-Coder.jinja", "Qwen3.5-4B.jinja", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
            "StepFun3.5-Flash.jinja"),
    "glm": ("GLM-4.6.jinja", "GLM-4.7-Flash.jinja", "Spark2.5.jinja", "poolside-Laguna-S-2.1.jinja",
            "poolside-Laguna-XS-2.1.jinja", "poolside-Laguna-XS.2.jinja"),
    "glm_ling": ("inclusionai-ling-3.0-flash.jinja",),
    "deepseek_v3": ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "llama-cpp-deepseek-r1.jinja"),
    "deepseek_v31": ("deepseek-ai-DeepSeek-V3.1.jinja",),
    "dsml": ("deepseek-ai-DeepSeek-V3.2.jinja", "deepseek-ai-DeepSeek-V4-Flash-0731.jinja",
             "deepseek-ai-DeepSeek-V4.jinja"),
}
MODES = ("think/auto", "nothink/auto", "think/required", "think/parallel", "think/none", "nothink/choice_none")

WEATHER = ("get_weather", {"city": "Rio", "days": 4})
TIME = ("get_time", {})
EVENT = ("create_event", {"event": {"title": "Lunch", "place": {"city": "Oslo", "room": 3}}, "attendees": ["a", "b"]})
CODE = ("run_code", {"language": "python", "code": "print('hi')\nx = {\"a\": 1}"})

GENERIC = ("Hello", "", "  Hello there \n", "<think>x</think>Hello", "<think>\nx\n</think>\n\nHello", "x</think>y",
           "Hello <think>x</think> bye", "<think>unfinished", "a</think>", "</think>b", "<think></think>", "\n\nHi")


@cache
def sessions(template: str) -> tuple[Session, ...]:
    """The template's single-conversation sessions in the modes the reply tests use."""
    found = {p.session.mode.label: p.session for p in plan("quick", templates=template)
             if p.session.conversation == "single"}
    return tuple(found[m] for m in MODES if m in found)


def session(template: str, mode: str) -> Session:
    """One session of a template by mode label."""
    return next(s for s in sessions(template) if s.mode.label == mode)


def written_turn(s: Session, calls: list[tuple[str, dict[str, Any]]], content: str = "",
                 reasoning: str = "") -> str | None:
    """What the template writes for an assistant turn with these calls, without its end-of-turn marker."""
    from templates.index import load_index

    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"call{i:05d}", "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, (n, a) in enumerate(calls)]
    if reasoning:
        message["reasoning_content"] = reasoning
    args = {"bos": s.bos, "eos": s.eos, "tools": list(s.tool_defs), "enable_thinking": s.enable_thinking,
            "extra": {**s.kwargs, "enable_thinking": s.enable_thinking}}
    try:
        base = render(s.template_source, messages=list(s.messages), add_generation_prompt=True, **args)
        full = render(s.template_source, messages=[*s.messages, message], add_generation_prompt=False, **args)
    except Exception:
        return None
    size = 0
    while size < min(len(base), len(full)) and base[size] == full[size]:
        size += 1
    text = full[size:]
    for marker in load_index()[s.template].end_of_turn:
        cut = text.rfind(marker)
        if cut >= 0:
            text = text[:cut]
    return text.rstrip("\n") if text.strip() else None


def replies(s: Session) -> list[tuple[str, bool]]:
    """(text, partial) pairs: generic texts, the template's own call turns, and broken variants of them."""
    out: list[tuple[str, bool]] = [(t, False) for t in GENERIC]
    calls = [t for t in (written_turn(s, spec) for spec in ([WEATHER], [TIME], [EVENT], [CODE], [WEATHER, TIME]))
             if t]
    calls += [t for t in (written_turn(s, [WEATHER], content="Let me check."),
                          written_turn(s, [WEATHER], reasoning="I should call it.")) if t]
    out += [(t, False) for t in calls]
    for text in calls[:2]:
        out += [(text + "\nDone.", False), ("Sure. " + text, False), (text.replace("get_weather", "get_wether"), False),
                (text.replace("4", '"4"'), False), (text.replace("}", "", 1), False)]
        out += [(text[:cut], True) for cut in (len(text) // 3, len(text) // 2, len(text) - 3)]
    return out


def normal(read: Any) -> tuple:
    """A reading for comparison: rejection, or reasoning, content and calls with arguments as parsed JSON."""
    if isinstance(read, (Rejection, reply.Rejected)):
        return ("rejected",)
    calls = []
    for call in read.tool_calls:
        try:
            arguments = json.dumps(json.loads(call.arguments), sort_keys=True)
        except ValueError:
            arguments = "raw:" + call.arguments
        calls.append((call.name, arguments))
    return (read.reasoning_content, read.content, tuple(calls))


def mine(read: Any, *args: Any, **kwargs: Any) -> Any:
    """A reading of the project parser (`read(*args, **kwargs)`): the message, or the Rejected exception."""
    try:
        return read(*args, **kwargs)
    except reply.Rejected as refusal:
        return refusal


def as_reading(message: reply.Message) -> Reading:
    """A project message as a harness reading."""
    return Reading.of(message)
