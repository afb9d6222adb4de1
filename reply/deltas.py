"""What a stream sends after each chunk, as llama-server sends it to an OpenAI client: the text each field added,
and each call that grew by its index, instead of the whole message so far."""

from __future__ import annotations

from dataclasses import dataclass, replace

from reply.messages import Message, ToolCall


@dataclass(frozen=True)
class ToolCallDelta:
    """What one call added: its index, its id where new or changed ("" else), and the name and arguments text
    added."""

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(frozen=True)
class Delta:
    """What a stream added after a chunk: reasoning and content text added, and the calls that grew."""

    reasoning_content: str = ""
    content: str = ""
    tool_calls: tuple[ToolCallDelta, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing was added (llama-server sends nothing)."""
        return not (self.reasoning_content or self.content or self.tool_calls)


def delta_between(before: Message, after: Message) -> Delta:
    """What `after` adds to `before`, a message it extends (a stream's snapshots do: text only grows, calls never
    vanish); the cost is that of what was added, plus one step per call."""
    calls = []
    for index, call in enumerate(after.tool_calls):
        old = before.tool_calls[index] if index < len(before.tool_calls) else ToolCall("", "")
        if call is old:
            continue
        grown = ToolCallDelta(index, call.id if call.id != old.id else "", call.name[len(old.name):],
                              call.arguments[len(old.arguments):])
        if grown.id or grown.name or grown.arguments or index >= len(before.tool_calls):
            calls.append(grown)
    return Delta(after.reasoning_content[len(before.reasoning_content):], after.content[len(before.content):],
                 tuple(calls))


def applied(message: Message, delta: Delta) -> Message:
    """The message a client holds after merging `delta` into `message`, as an OpenAI client merges a stream."""
    calls = list(message.tool_calls)
    for grown in delta.tool_calls:
        if grown.index == len(calls):
            calls.append(ToolCall("", ""))
        old = calls[grown.index]
        calls[grown.index] = ToolCall(old.name + grown.name, old.arguments + grown.arguments, grown.id or old.id)
    return replace(message, reasoning_content=message.reasoning_content + delta.reasoning_content,
                   content=message.content + delta.content, tool_calls=tuple(calls), problems=())
