"""Placing a reply on the tape: the chat request whose prompt holds the reply exactly DISTANCE tokens before the
first generated token, and why a reply cannot be placed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from chatparity.model import NotWritten, Session
from harness.server_process import CONTEXT
from oracle.tape import DISTANCE

FILLER = " x"
PLACEABLE_ROLES = ("user", "tool")

Post = Callable[[str, dict[str, Any]], Any]


class Cause(str, Enum):
    """Why the server did not write a reply."""

    GRAMMAR = "not writable under the server's tool grammar"
    TEMPLATE = "changed by the template"
    LENGTH = "too long for the tape"
    SPECIAL = "a special token the server does not write as text"
    OTHER = "written otherwise"


def not_written(cause: Cause, detail: str) -> NotWritten:
    """The row's NotWritten of a cause."""
    return NotWritten(cause.value, detail)


@dataclass(frozen=True)
class Placement:
    """A reply placed on the tape: the request body and the reply's token ids."""

    body: dict[str, Any]
    reply_ids: tuple[int, ...]


def placeable(session: Session) -> str:
    """'' when the session's last message can carry the tape, else why not."""
    if not session.messages:
        return "the conversation has no message"
    last = session.messages[-1]
    if last.get("role") not in PLACEABLE_ROLES or not isinstance(last.get("content"), str):
        return f"the conversation ends on a {last.get('role')!r} message without text content"
    return ""


def request_body(session: Session, tape: str) -> dict[str, Any]:
    """The session's chat request with its last message's content replaced by the tape (an enable_thinking the
    session's own kwargs set overrides its thinking flag, as in the oracle's render)."""
    messages = [dict(message) for message in session.messages]
    messages[-1]["content"] = tape
    body: dict[str, Any] = {
        "messages": messages,
        "chat_template_kwargs": {"enable_thinking": session.enable_thinking, **session.chat_template_kwargs},
        "reasoning_format": session.reasoning_format,
    }
    if session.tools:
        body.update(tools=session.tools, tool_choice=session.tool_choice,
                    parallel_tool_calls=session.parallel_tool_calls)
    return body


def last_run(haystack: Sequence[int], needle: Sequence[int]) -> int:
    """The start of the last occurrence of `needle` in `haystack`, or -1."""
    size = len(needle)
    for start in range(len(haystack) - size, -1, -1):
        if list(haystack[start : start + size]) == list(needle):
            return start
    return -1


def tokenize(post: Post, text: str, special: bool) -> list[int]:
    """The server's token ids of a text (special tokens parsed; BOS added when `special`)."""
    answer = post("/tokenize", {"content": text, "add_special": special, "parse_special": True})
    return [int(token) for token in answer["tokens"]]


def distance_of(post: Post, body: dict[str, Any], reply: str, run: Sequence[int]) -> int:
    """How many tokens the reply starts before the first generated token, as the server renders `body`."""
    prompt = post("/apply-template", body)["prompt"]
    if reply not in prompt:
        raise not_written(Cause.TEMPLATE, "the rendered prompt does not hold the reply verbatim")
    ids = tokenize(post, prompt, True)
    start = last_run(ids, run)
    if start < 0:
        raise not_written(Cause.TEMPLATE, "the text around the reply changes its tokens in the prompt")
    if len(ids) + len(run) > CONTEXT:
        raise not_written(Cause.LENGTH, f"prompt and reply take {len(ids) + len(run)} tokens of {CONTEXT}")
    return len(ids) - 1 - start


def place(post: Post, session: Session, reply: str, eog: str) -> Placement:
    """The request that makes the tape write `reply` then the end-of-generation token; where the template's
    text before the content merges with the reply's first token, the tape starts with the end-of-generation
    text too (tokenization restarts after a special token)."""
    try:
        return placed(post, session, reply, eog, "")
    except NotWritten as error:
        if "changes its tokens" not in str(error):
            raise
        return placed(post, session, reply, eog, eog)


def placed(post: Post, session: Session, reply: str, eog: str, lead: str) -> Placement:
    """`place` with `lead` before the reply on the tape."""
    run = tokenize(post, reply + eog, False)
    filler = 0
    for _ in range(3):
        body = request_body(session, lead + reply + eog + FILLER * filler)
        found = distance_of(post, body, reply + eog, run)
        if found == DISTANCE:
            return Placement(body, tuple(run[: len(run) - len(tokenize(post, eog, False))]))
        filler += DISTANCE - found
        if filler < 0:
            raise not_written(Cause.LENGTH, f"the reply and what follows it take {found} tokens of {DISTANCE}")
    raise not_written(Cause.TEMPLATE, "the filler does not keep its tokens in the prompt")
