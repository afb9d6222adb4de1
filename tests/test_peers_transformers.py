"""transformers' adapter, driven with a stand-in of `transformers serve`'s parsing functions (nothing is
installed or downloaded): a refusal is an answer, a stream shows the server's items, a failed finalize drops
the tail."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from peers.transformers.adapter import MODELS_FILE, TransformersPeer, read_models
from peers.wire import Unsupported

EXPECTATIONS = Path(__file__).resolve().parent.parent / "peers" / "transformers" / "expectations"


class ReasoningText(str):
    """The server's reasoning item."""


def parse_assistant_message(processor: Any, config: Any, text: str, prefix: str, tools: Any = None) -> tuple:
    """Reads `content` and `CALL name` lines; refuses a reply holding `{bad`."""
    if "{bad" in text:
        raise ValueError("malformed JSON in tool_calls")
    assert processor.parse_response is not None and prefix == "PROMPT"
    content, _, name = text.partition("CALL ")
    return content, None, [SimpleNamespace(name=name, arguments="{}")] if name else None


class Parser:
    """A streaming parser whose events are the chunk's own items; `finalize` fails when told to."""

    def __init__(self, template: Any, prefix: str, tools: Any = None) -> None:
        self.initial_events = [ReasoningText("from the prompt ")]

    def feed(self, chunk: str) -> list[Any]:
        if chunk == "{bad":
            raise ValueError("json parser could not parse region as JSON.")
        if chunk.startswith("CALL "):
            return [SimpleNamespace(name=chunk[5:], arguments='{"a": 1}')]
        return [ReasoningText(chunk[6:])] if chunk.startswith("THINK ") else [chunk]

    def finalize(self) -> tuple[dict, list[Any]]:
        raise ValueError("required field missing")


API = SimpleNamespace(
    parse_response=lambda *args, **kwargs: {},
    ResponseParser=Parser,
    parse_assistant_message=parse_assistant_message,
    get_response_template=lambda processor, config: None if config.model_type == "bare" else {"fields": {}},
    response_events_to_chunks=lambda events: events,
    ReasoningText=ReasoningText,
    ToolCall=SimpleNamespace,
)
MODELS = {
    "qwen.jinja": {"name": "qwen.jinja", "model_type": "qwen3", "reason": "test"},
    "bare.jinja": {"name": "bare.jinja", "model_type": "bare", "reason": "test"},
}


def session(template: str = "qwen.jinja") -> dict[str, Any]:
    """A session with its prompt."""
    return {"template": template, "prompt": "PROMPT", "tools": []}


def test_a_whole_reply_is_the_server_s_message_and_a_refusal_an_answer() -> None:
    """parse_assistant_message's reading; its ValueError is a rejection, not a crash."""
    reader = TransformersPeer(API, MODELS).open(session())
    assert reader.parse("hi CALL f", partial=False) == {
        "content": "hi ",
        "reasoning_content": "",
        "tool_calls": [{"name": "f", "arguments": "{}", "id": ""}],
    }
    assert reader.parse("CALL f{bad", partial=False) == {"rejected": "malformed JSON in tool_calls"}


def test_a_stream_shows_the_prompt_s_items_first_and_drops_the_tail_when_finalize_fails() -> None:
    """Items of the prefix, then of each chunk; a failed finalize adds nothing."""
    snapshots, final = (
        TransformersPeer(API, MODELS).open(session()).stream(["THINK x", "hi", "CALL f"], finish=True)
    )
    assert snapshots[0] == {"content": "", "reasoning_content": "from the prompt x", "tool_calls": []}
    assert snapshots[1]["content"] == "hi"
    assert final == snapshots[2] and final["tool_calls"] == [{"name": "f", "arguments": '{"a": 1}', "id": ""}]


def test_a_region_the_template_cannot_read_ends_the_stream_with_its_refusal() -> None:
    """feed's ValueError ends the server's stream: that snapshot, the rest and the final are the refusal."""
    snapshots, final = (
        TransformersPeer(API, MODELS).open(session()).stream(["hi", "{bad", "more"], finish=True)
    )
    refusal = {"rejected": "json parser could not parse region as JSON."}
    assert snapshots[0]["content"] == "hi" and snapshots[1:] == [refusal, refusal] and final == refusal


def test_templates_without_a_response_template_are_declined() -> None:
    """Not listed, or a model type transformers ships no fallback for."""
    peer = TransformersPeer(API, MODELS)
    with pytest.raises(Unsupported, match="ships no response template for this model"):
        peer.open(session("other.jinja"))
    with pytest.raises(Unsupported, match="model type 'bare'"):
        peer.open(session("bare.jinja"))


def test_the_models_file_gives_each_listed_template_a_model_type_and_a_reason() -> None:
    """Each entry names the model type serve would read it as, and why."""
    models = read_models(EXPECTATIONS / MODELS_FILE)
    assert models["Qwen-Qwen3-0.6B.jinja"]["model_type"] == "qwen3"
    assert all(entry["model_type"] and entry["reason"] for entry in models.values())


def test_transformers_policies_name_rules_the_harness_knows() -> None:
    """Its whitespace and held-delimiter rules load from its expectations, in order."""
    from harness.policies import policies_in

    assert policies_in(EXPECTATIONS).names == ("strips-text-regions", "holds-a-delimiter-still-arriving")
