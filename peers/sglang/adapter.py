"""SGLang's parsers driven as its server drives them (`sglang/srt/entrypoints/openai/serving_chat.py`): the
reasoning parser first, its normal text then through the tool-call parser, with the request's thinking
setting, tool choice and reasoning options. Runs in SGLang's own environment and imports only the standard
library and SGLang (handed in as `api`)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from peers.wire import Unsupported, reading

PARSERS_FILE = "parsers.toml"


@dataclass(frozen=True)
class Choice:
    """The parsers a template is served with (`--tool-call-parser`, `--reasoning-parser`) and why."""

    template: str
    tool: str
    reasoning: str
    reason: str


def read_choices(path: Path) -> dict[str, Choice]:
    """The `[[template]]` entries of a parsers file, by template name."""
    entries = tomllib.loads(path.read_text(encoding="utf-8"))["template"]
    return {
        entry["name"]: Choice(
            entry["name"], entry.get("tool", ""), entry.get("reasoning", ""), entry["reason"]
        )
        for entry in entries
    }


def history_calls(messages: list[dict[str, Any]]) -> int:
    """The tool calls of the conversation's assistant turns (`_get_history_tool_calls_cnt`)."""
    return sum(
        len(message.get("tool_calls") or []) for message in messages if message.get("role") == "assistant"
    )


def call_id(parser: str, name: str, index: int) -> str:
    """The id `_process_tool_call_id` gives a call: Kimi's carry the name and ordinal, others a random uuid
    (left empty here, as no reading can agree with a random id)."""
    if parser == "kimi_k3":
        return f"{name}:{index}"
    if parser == "kimi_k2":
        return f"functions.{name}:{index}"
    return ""


def thinking_from_request(parser: str, config: Any, default_mode: str | None, request: Any) -> bool:
    """Whether the request asks for reasoning (`_get_reasoning_from_request`, the branches for the parsers of
    the templates swept here)."""
    kwargs = request.chat_template_kwargs or {}
    effort = request.reasoning_effort
    if parser == "minimax-m3":
        return kwargs.get("thinking_mode") == "enabled"
    if parser == "hunyuan":
        if config is not None and config.special_case == "hunyuan_effort":
            return effort not in ("none", "no_think")
        return effort not in (None, "none", "no_think")
    if config is None:
        if default_mode in (None, "always"):
            return default_mode == "always"
        if default_mode == "mistral":
            return effort is not None and effort != "none"
        if default_mode in ("thinking", "enable_thinking"):
            return not kwargs or kwargs.get(default_mode) is not False
        if default_mode in ("explicit_thinking", "explicit_enable_thinking"):
            return kwargs.get(default_mode.replace("explicit_", "")) is True
        return False
    if config.special_case == "always":
        return True
    if config.special_case == "mistral":
        return effort is not None and effort != "none"
    if config.toggle_param is None or config.default_enabled is None:
        return False
    if config.default_enabled:
        return not kwargs or kwargs.get(config.toggle_param) is not False
    return kwargs.get(config.toggle_param) is True


@dataclass
class Shown:
    """What a streaming client has put together from the deltas so far."""

    content: str = ""
    reasoning: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)

    def add_calls(self, items: list[Any], parser: str, history: int) -> None:
        """Apply tool-call deltas: a name opens a call at its index, parameters extend its arguments."""
        for item in items:
            call = self.calls.setdefault(item.tool_index, {"name": "", "arguments": "", "id": ""})
            if item.name:
                call["name"] = item.name
                call["id"] = call_id(parser, item.name, history + item.tool_index)
            call["arguments"] += item.parameters or ""

    def reading(self) -> dict[str, Any]:
        """The reading so far."""
        return reading(
            self.content, self.reasoning, [dict(self.calls[index]) for index in sorted(self.calls)]
        )


class SglangReader:
    """One session as SGLang's server reads its replies."""

    def __init__(self, api: Any, choice: Choice, session: dict[str, Any]) -> None:
        self.api = api
        self.choice = choice
        self.tool_choice = session["tool_choice"] or "auto"
        self.tools = [api.Tool.model_validate(tool) for tool in session["tools"] or []]
        self.history = history_calls(session["messages"])
        self.request = api.request(session)
        self.force_reasoning = False
        if choice.reasoning:
            template_force, config = api.detect_reasoning_pattern(session["template_source"])
            default = api.ReasoningParser(model_type=choice.reasoning, stream_reasoning=True).detector
            self.force_reasoning = template_force or thinking_from_request(
                choice.reasoning, config, getattr(default, "reasoning_default", None), self.request
            )
        self.required = self.tool_choice == "required"
        if self.parsing_calls and self.required and not self.call_parser(self.tool_choice).owns_tool_format():
            raise Unsupported(
                f"SGLang reads tool_choice=required with {choice.tool} as the JSON array its own "
                "grammar makes the model write, not the template's format"
            )

    @property
    def parsing_calls(self) -> bool:
        """Whether replies go through the tool-call parser (`_tool_call_parsing_active`)."""
        if not self.choice.tool:
            return False
        if not self.tools:
            return bool(
                self.api.FunctionCallParser.ToolCallParserEnum[self.choice.tool].parses_without_tools()
            )
        return self.tool_choice != "none"

    def call_parser(self, tool_choice: str | None) -> Any:
        """A fresh tool-call parser for the request's tools."""
        return self.api.FunctionCallParser(self.tools, self.choice.tool, tool_choice=tool_choice)

    def reasoning_parser(self, stream_reasoning: bool) -> Any:
        """A fresh reasoning parser as the server makes one per reply."""
        return self.api.ReasoningParser(
            model_type=self.choice.reasoning,
            stream_reasoning=stream_reasoning,
            force_reasoning=self.force_reasoning,
            request=self.request,
            tool_call_parser_active=self.parsing_calls,
        )

    def answer_started(self, parser: Any) -> bool:
        """Whether a response-template reasoning parser has seen the answer begin (`_answer_started`)."""
        return (
            parser is not None
            and type(parser.detector).__name__ == "ResponseTemplateReasoningDetector"
            and bool(parser.detector.answer_started)
        )

    def parse(self, text: str, partial: bool) -> dict[str, Any]:
        """A finished response: reasoning split off, then the calls read from the rest (`_build_chat_response`
        and `_process_tool_calls`); a call parser's exception leaves the text as it was, as the server does.
        """
        reasoning = ""
        parser = None
        if self.choice.reasoning:
            parser = self.reasoning_parser(stream_reasoning=False)
            found, text = parser.parse_non_stream(text)
            reasoning, text = found or "", text or ""
        calls: list[dict[str, str]] = []
        if self.parsing_calls and not self.answer_started(parser):
            calls_parser = self.call_parser(self.tool_choice)
            if calls_parser.has_tool_call(text):
                try:
                    rest, items = calls_parser.parse_non_stream(text)
                except Exception:  # noqa: BLE001 - the server logs any parse error and keeps the text
                    rest, items = text, []
                text = rest
                calls = [
                    {
                        "name": item.name,
                        "arguments": item.parameters,
                        "id": call_id(self.choice.tool, item.name, self.history + index),
                    }
                    for index, item in enumerate(items)
                ]
        return reading(text, reasoning, calls)

    def stream(self, chunks: list[str], finish: bool) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """Each chunk as one delta of `_generate_stream_content`: the reasoning parser's normal text feeds the
        tool-call parser; at the finish both are flushed and arguments not yet streamed are sent."""
        reasoning = self.reasoning_parser(self.request.stream_reasoning) if self.choice.reasoning else None
        calls = None
        if self.parsing_calls:
            calls = self.call_parser(self.tool_choice) if self.required else self.call_parser(None)
        shown = Shown()
        snapshots = []
        for chunk in chunks:
            self.step(shown, reasoning, calls, chunk, flush=False)
            snapshots.append(shown.reading())
        if not finish:
            return snapshots, None
        self.step(shown, reasoning, calls, "", flush=True)
        return snapshots, shown.reading()

    def step(self, shown: Shown, reasoning: Any, calls: Any, delta: str, flush: bool) -> None:
        """One delta through both parsers (`_process_reasoning_stream`, `_process_tool_call_stream`)."""
        if reasoning is not None:
            found, delta = reasoning.parse_stream_chunk(delta) if delta or not flush else ("", "")
            if flush:
                end_found, end_text = reasoning.parse_stream_end()
                found, delta = (found or "") + (end_found or ""), (delta or "") + (end_text or "")
            shown.reasoning += found or ""
            delta = delta or ""
        if calls is None or self.answer_started(reasoning):
            shown.content += delta
            return
        text, items = calls.parse_stream_chunk(delta)
        if flush:
            end_text, end_items = calls.parse_stream_end()
            text, items = (text or "") + end_text, [*items, *end_items]
        shown.content += text or ""
        shown.add_calls(items, self.choice.tool, self.history)
        if flush:
            shown.add_calls(unstreamed_arguments(calls.detector), self.choice.tool, self.history)


def unstreamed_arguments(detector: Any) -> list[Any]:
    """The rest of the last call's arguments the detector parsed but did not stream
    (`_check_for_unstreamed_tool_args`)."""
    parsed = getattr(detector, "prev_tool_call_arr", None)
    streamed = getattr(detector, "streamed_args_for_tool", None)
    if not parsed or not streamed:
        return []
    index = len(parsed) - 1
    if index >= len(streamed):
        return []
    expected = parsed[index].get("arguments", {})
    expected = expected if isinstance(expected, str) else json_text(expected)
    rest = expected[len(streamed[index]) :] if expected.startswith(streamed[index]) else ""
    return [SimpleNamespace(tool_index=index, name=None, parameters=rest)] if rest else []


def json_text(value: Any) -> str:
    """JSON as the server writes it (`json.dumps(..., ensure_ascii=False)`)."""
    return json.dumps(value, ensure_ascii=False)


class SglangPeer:
    """Opens each session with the parsers its template is served with, or declines it."""

    def __init__(self, api: Any, choices: dict[str, Choice]) -> None:
        self.api = api
        self.choices = choices

    def open(self, session: dict[str, Any]) -> SglangReader:
        """A reader for the session; Unsupported where SGLang has no parser for its template."""
        choice = self.choices.get(session["template"])
        if choice is None or not (choice.tool or choice.reasoning):
            why = choice.reason if choice else "no SGLang parser is chosen for this template"
            raise Unsupported(f"{session['template']}: {why}")
        return SglangReader(self.api, choice, session)
