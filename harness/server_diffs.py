"""llama-server's diffs between two snapshots of a streamed message (common_chat_msg_diff::compute_diffs), and what a
client that applies them holds, so a stream's retractions are judged as a client sees them."""

from __future__ import annotations

from chatparity.model import Message, ToolCall


class InvalidDiff(Exception):
    """compute_diffs threw: llama-server ends the stream with this error."""


def string_diff(last: str, current: str) -> str:
    """What `current` adds to `last`: '' where it is a prefix of `last` (llama.cpp's silent shrink), InvalidDiff
    where neither starts the other."""
    if not last:
        return current
    if not current.startswith(last):
        if last.startswith(current):
            return ""
        raise InvalidDiff(f"Invalid diff: '{last}' not found at start of '{current}'")
    return current[len(last):]


def applied(client: Message, before: Message, after: Message) -> Message:
    """`client` after the diffs llama-server sends from snapshot `before` to `after`; InvalidDiff where it sends
    none (the stream ends with that error)."""
    reasoning, content = client.reasoning_content, client.content
    if before.reasoning_content != after.reasoning_content:
        reasoning += string_diff(before.reasoning_content, after.reasoning_content)
    if before.content != after.content:
        content += string_diff(before.content, after.content)
    if len(after.tool_calls) < len(before.tool_calls):
        raise InvalidDiff("Invalid diff: now finding less tool calls!")
    calls = list(client.tool_calls)
    if before.tool_calls:
        index = len(before.tool_calls) - 1
        old, new = before.tool_calls[index], after.tool_calls[index]
        if old.name != new.name and old.name and new.name and not new.name.startswith(old.name):
            raise InvalidDiff("Invalid diff: tool call mismatch!")
        added = string_diff(old.arguments, new.arguments)
        held = calls[index]
        if old.id != new.id or old.name != new.name:
            held = ToolCall(new.name or held.name, held.arguments, new.id or held.id)
        calls[index] = ToolCall(held.name, held.arguments + added, held.id)
    calls += after.tool_calls[len(before.tool_calls):]
    return Message(content, reasoning, tuple(calls))


def shrinks(before: Message, after: Message) -> str:
    """The first field whose text `after` silently cuts short or changes without a diff (a text llama-server sends
    nothing for, so a client keeps the longer one): 'reasoning_content', 'content', 'tool_calls[N].arguments' or
    'tool_calls[N]' (an earlier call changed); '' where none does."""
    for field in ("reasoning_content", "content"):
        old, new = getattr(before, field), getattr(after, field)
        if old != new and old.startswith(new):
            return field
    last = len(before.tool_calls) - 1
    for index, (old_call, new_call) in enumerate(zip(before.tool_calls, after.tool_calls)):
        if index < last and old_call != new_call:
            return f"tool_calls[{index}]"
        if index == last and old_call.arguments != new_call.arguments and old_call.arguments.startswith(
            new_call.arguments
        ):
            return f"tool_calls[{index}].arguments"
    return ""
