"""transformers' response templates driven as `transformers serve` drives them
(`transformers/cli/serving/utils.py`): a whole reply through `parse_assistant_message`, a stream through a
`ResponseParser` whose events become content, reasoning and finished calls (`response_events_to_chunks`). Runs
in transformers' own environment and imports only the standard library and transformers (handed in as `api`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from peers.wire import Unsupported, reading

MODELS_FILE = "models.toml"


def read_models(path: Path) -> dict[str, dict[str, str]]:
    """The `[[template]]` entries of a models file (name, model_type, reason), by template name."""
    return {entry["name"]: entry for entry in tomllib.loads(path.read_text(encoding="utf-8"))["template"]}


class TextTokenizer:
    """The processor `parse_assistant_message` asks to parse: it reads text, as no tokenizer can be had here
    (the server reads token ids, where a control token spelled out in plain tokens stays text)."""

    def __init__(self, api: Any) -> None:
        self.api = api

    def parse_response(self, text: str, template: Any, prefix: str, tools: Any) -> dict[str, Any]:
        """The reply read with the tokenizer-free engine."""
        return self.api.parse_response(text, template, prefix=prefix, tools=tools)


@dataclass
class Shown:
    """What a streaming client has put together from the server's items so far."""

    content: str = ""
    reasoning: str = ""
    calls: list[dict[str, str]] = field(default_factory=list)

    def reading(self) -> dict[str, Any]:
        """The reading so far."""
        return reading(self.content, self.reasoning, list(self.calls))


class ResponseTemplateReader:
    """One session as `transformers serve` reads its replies, with the response template of its model type."""

    def __init__(self, api: Any, model_type: str, session: dict[str, Any]) -> None:
        self.api = api
        self.config = SimpleNamespace(model_type=model_type)
        self.processor = TextTokenizer(api)
        self.template = api.get_response_template(self.processor, self.config)
        if self.template is None:
            raise Unsupported(f"transformers ships no response template for model type {model_type!r}")
        self.prefix = session["prompt"]
        self.tools = session["tools"] or None

    def parse(self, text: str, partial: bool) -> dict[str, Any]:
        """`parse_assistant_message`; the ValueError it raises on a reply its template cannot read is the
        server's refusal."""
        try:
            content, thought, calls = self.api.parse_assistant_message(
                self.processor, self.config, text, self.prefix, tools=self.tools
            )
        except ValueError as error:
            return {"rejected": str(error)}
        return reading(content or "", thought or "", [call_json(call) for call in calls or []])

    def stream(self, chunks: list[str], finish: bool) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The Detokenizer's items: the prefix's events first, each chunk's, then (at the finish) those of
        `finalize`, whose failure drops the tail as the server does. A region its template cannot read raises
        from `feed`, which ends the server's stream with an error: that snapshot and the rest are the refusal.
        """
        parser = self.api.ResponseParser(self.template, prefix=self.prefix, tools=self.tools)
        shown = Shown()
        self.take(shown, parser.initial_events)
        snapshots: list[dict[str, Any]] = []
        for chunk in chunks:
            try:
                self.take(shown, parser.feed(chunk))
            except ValueError as error:
                refusal = {"rejected": str(error)}
                snapshots += [refusal] * (len(chunks) - len(snapshots))
                return snapshots, refusal if finish else None
            snapshots.append(shown.reading())
        if not finish:
            return snapshots, None
        try:
            _, events = parser.finalize()
        except (ValueError, RuntimeError):
            events = []
        self.take(shown, events)
        return snapshots, shown.reading()

    def take(self, shown: Shown, events: list[dict[str, Any]]) -> None:
        """Add the items `response_events_to_chunks` makes of the events."""
        for item in self.api.response_events_to_chunks(events):
            if isinstance(item, self.api.ReasoningText):
                shown.reasoning += str(item)
            elif isinstance(item, self.api.ToolCall):
                shown.calls.append(call_json(item))
            else:
                shown.content += item


def call_json(call: Any) -> dict[str, str]:
    """A call as the protocol writes it (the server's ids count the request's calls; none to compare here)."""
    return {"name": call.name, "arguments": call.arguments, "id": ""}


class TransformersPeer:
    """Opens each session with its model's response template, or declines it."""

    def __init__(self, api: Any, models: dict[str, dict[str, str]]) -> None:
        self.api = api
        self.models = models

    def open(self, session: dict[str, Any]) -> ResponseTemplateReader:
        """A reader for the session; Unsupported where transformers has no response template for it."""
        entry = self.models.get(session["template"])
        if entry is None or not entry.get("model_type"):
            why = entry["reason"] if entry else "transformers ships no response template for this model"
            raise Unsupported(f"{session['template']}: {why}")
        return ResponseTemplateReader(self.api, entry["model_type"], session)
