"""What llama-server wrote for one reply, checked to be the reply: its final answer and its merged SSE stream."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from chatparity.model import Message, Reading, Rejection, Session, ToolCall, common_prefix_length
from harness.server_client import HttpError, Merged, message_of
from harness.server_tape import Cause, Placement, not_written

SLACK_TOKENS = 8
LOG_WAIT = 2.0
PARSE_FAILED = re.compile(r"=== BEGIN ===\n(.*?)\n=== END ===", re.DOTALL)


def chat_body(placement: Placement, partial: bool) -> dict[str, Any]:
    """The chat request of a placed reply: a cut reply stops at its own length, a finished one at its
    end-of-generation token (max_tokens leaves room for a grammar's detour to show)."""
    limit = len(placement.reply_ids) + (0 if partial else SLACK_TOKENS)
    return {**placement.body, "max_tokens": max(1, limit), "verbose": True, "return_tokens": True}


def constrained(session: Session) -> bool:
    """Whether the server's tool grammar constrains what a request of the session writes: tools are offered and
    tool_choice is not none."""
    return bool(session.tools) and session.tool_choice != "none"


def cause_of(tools: bool, ids: Sequence[int], tokens: Sequence[int], raw: str, reply: str) -> Cause | None:
    """Why the generated `tokens` and raw text are not the reply's (None when they are); `tools`: whether the
    request offered tools (so a grammar constrained the text, and may not let it end where the reply ends)."""
    wrote_ids = list(tokens[: len(ids)]) == list(ids)
    if wrote_ids and raw == reply:
        return None
    if wrote_ids and raw.startswith(reply):
        return Cause.GRAMMAR if tools else Cause.OTHER
    if wrote_ids or (list(ids[: len(tokens)]) == list(tokens) and len(tokens) < len(ids)):
        return Cause.SPECIAL
    return Cause.GRAMMAR if tools else Cause.OTHER


def check_written(session: Session, placement: Placement, reply: str, verbose: dict[str, Any]) -> None:
    """NotWritten when the server's generated ids (`return_tokens`) or raw text (`verbose`) are not the reply."""
    tokens = [int(token) for token in verbose.get("tokens") or ()]
    raw = str(verbose.get("content", ""))
    cause = cause_of(constrained(session), placement.reply_ids, tokens, raw, reply)
    if cause is not None:
        raise not_written(cause, departure(reply, raw))


def without(text: str, markers: Sequence[str]) -> str:
    """`text` with every one of `markers` taken out."""
    for marker in markers:
        text = text.replace(marker, "")
    return text


def departure(reply: str, raw: str) -> str:
    """Where the server's raw text leaves the reply, with a little of each from there."""
    at = common_prefix_length(reply, raw)
    return f"the server wrote {raw[at : at + 60]!r} at {at} where the reply has {reply[at : at + 60]!r}"


def logged_output(log_since: Callable[[], str]) -> str | None:
    """The text the server's parser refused, from its debug log (written asynchronously: waited for)."""
    due = time.monotonic() + LOG_WAIT
    while True:
        found = PARSE_FAILED.findall(log_since())
        if found or time.monotonic() > due:
            return found[-1] if found else None
        time.sleep(0.05)


def final_answer(post: Callable[[str, dict[str, Any]], Any], log_since: Callable[[], str], session: Session,
                 placement: Placement, reply: str, partial: bool, hidden: Sequence[str]) -> Reading:
    """The non-stream answer for a placed reply, checked to be what the server wrote; an HTTP 500 is the
    server's rejection when its log shows it refused the reply itself (`hidden`: the control tokens that may
    be missing from the text it refused)."""
    try:
        answer = post("/v1/chat/completions", chat_body(placement, partial))
    except HttpError as error:
        if error.status != 500:
            raise
        refused = logged_output(log_since)
        if refused is None or not refused.endswith(reply):
            special = refused is not None and without(refused, hidden).endswith(without(reply, hidden))
            cause = Cause.SPECIAL if special else Cause.GRAMMAR if constrained(session) else Cause.OTHER
            shown = "no text in its log" if refused is None else f"its parser refused text ending {refused[-80:]!r}"
            raise not_written(cause, f"HTTP 500 ({error.message[:120]}); {shown}") from None
        return Rejection(error.message)
    check_written(session, placement, reply, answer.get("__verbose") or {})
    return own_ids(message_of(answer), reply)


def own_ids(message: Message, reply: str) -> Message:
    """The message with the tool-call ids the server invented (absent from the reply) left empty: the harness
    compares ids only where the model wrote them."""
    calls = tuple(call if call.id and call.id in reply else ToolCall(call.name, call.arguments)
                  for call in message.tool_calls)
    return Message(message.content, message.reasoning_content, calls)


def token_ends(reply: str, pieces: Sequence[Any]) -> list[int]:
    """The code-point offset where each token of the reply ends (a token ending inside a UTF-8 sequence ends
    where the last whole character before it does)."""
    data = reply.encode("utf-8")
    ends, size = [], 0
    for piece in pieces:
        size += len(piece.encode("utf-8")) if isinstance(piece, str) else len(piece)
        ends.append(len(data[:size].decode("utf-8", "ignore")))
    return ends


def stream_snapshots(merged: Merged, ends: Sequence[int], chunk_ends: Sequence[int]) -> list[Message]:
    """What the client held at each chunk end: the message after the last event of the tokens that end at or
    before it (the events of the final answer, which carries the finish reason, left out)."""
    batches = partial_batches(merged)
    held, out, index = Message(), [], 0
    for end in chunk_ends:
        while index < len(batches) and token_end(ends, batches[index][0]) <= end:
            held = batches[index][1]
            index += 1
        out.append(held)
    return out


def token_end(ends: Sequence[int], decoded: int) -> int:
    """Where the text of the first `decoded` tokens ends."""
    if decoded <= 0:
        return 0
    return ends[min(decoded, len(ends)) - 1] if ends else 0


def partial_batches(merged: Merged) -> list[tuple[int, Message]]:
    """The events before the final answer, each with the tokens decoded when it was sent (an event without
    timings belongs with the next one that has them, as the server sends one batch per token)."""
    events = merged.snapshots[: merged.final_start]
    out: list[tuple[int, Message]] = []
    pending: list[Message] = []
    for decoded, message in events:
        pending.append(message)
        if decoded:
            out += [(decoded, held) for held in pending]
            pending = []
    return out
