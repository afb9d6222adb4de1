"""llama-server's HTTP API as a client sees it: JSON posts, and SSE streams merged as an OpenAI client merges."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass, field
from typing import Any

from chatparity.model import Message, ToolCall

HOST = "127.0.0.1"


class HttpError(Exception):
    """The server answered with an error status: the status and its message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


def error_message(body: bytes) -> str:
    """The `error.message` of an error body, else the body itself."""
    try:
        data = json.loads(body)
        return str(data["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")


def post(port: int, path: str, body: dict[str, Any], timeout: float) -> Any:
    """POST JSON and return the JSON answer; HttpError for an error status."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    if response.status != 200:
        raise HttpError(response.status, error_message(data))
    return json.loads(data)


@dataclass
class Merged:
    """What an OpenAI client holds after each SSE event of a chat stream: the message so far, one snapshot per
    event with the tokens decoded when it was sent (0 where the event has no timings), the error event's
    message, if any, and where the final answer's events start (after the last token's)."""

    content: str = ""
    reasoning: str = ""
    calls: list[dict[str, str]] = field(default_factory=list)
    snapshots: list[tuple[int, Message]] = field(default_factory=list)
    error: str = ""
    final_start: int = 0

    def message(self) -> Message:
        """The message held now."""
        calls = tuple(ToolCall(call["name"], call["arguments"], call["id"]) for call in self.calls)
        return Message(self.content, self.reasoning, calls)

    def add(self, event: dict[str, Any]) -> None:
        """Merge one event: content and reasoning appended, tool calls by index (name and arguments
        appended); the snapshot after it is kept with the tokens decoded so far (timings.predicted_n)."""
        if "error" in event:
            self.error = str(event["error"].get("message", event["error"]))
            return
        for choice in event.get("choices", ()):
            delta = choice.get("delta") or {}
            self.content += delta.get("content") or ""
            self.reasoning += delta.get("reasoning_content") or ""
            for call in delta.get("tool_calls") or ():
                index = int(call.get("index", len(self.calls)))
                while len(self.calls) <= index:
                    self.calls.append({"name": "", "arguments": "", "id": ""})
                function = call.get("function") or {}
                self.calls[index]["name"] += function.get("name") or ""
                self.calls[index]["arguments"] += function.get("arguments") or ""
                self.calls[index]["id"] = call.get("id") or self.calls[index]["id"]
        decoded = int((event.get("timings") or {}).get("predicted_n", 0))
        self.snapshots.append((decoded, self.message()))
        if decoded and not any(choice.get("finish_reason") for choice in event.get("choices", ())):
            self.final_start = len(self.snapshots)


def stream(port: int, body: dict[str, Any], timeout: float) -> Merged:
    """POST a chat request with `stream: true` and merge its SSE events; HttpError for an error status."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    merged = Merged()
    try:
        connection.request("POST", "/v1/chat/completions", json.dumps({**body, "stream": True}),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            raise HttpError(response.status, error_message(response.read()))
        for raw in response:
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            merged.add(json.loads(line[len("data: ") :]))
    finally:
        connection.close()
    return merged


def message_of(answer: dict[str, Any]) -> Message:
    """The message of a non-stream chat answer."""
    message = answer["choices"][0]["message"]
    calls = tuple(
        ToolCall(call["function"]["name"], call["function"]["arguments"], call.get("id") or "")
        for call in message.get("tool_calls") or ()
    )
    return Message(message.get("content") or "", message.get("reasoning_content") or "", calls)
