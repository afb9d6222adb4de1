"""The multi-turn checks of a turn: the next prompt appends the reply exactly, one turn end after it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from chatparity.model import common_prefix_length
from corpora.turns import closes_a_pair
from harness.compare import excerpt


class Break(str, Enum):
    """What a template does to a reply once it is history, at the first byte the next prompt differs."""

    SYSTEM_MOVED = "system prompt moved"
    TOOLS_MOVED = "tool list moved"
    HISTORY_THOUGHT_DROPPED = "earlier thought dropped"
    HISTORY_REWRITTEN = "earlier history rewritten"
    THOUGHT_DROPPED = "thought dropped from history"
    EMPTY_THOUGHT_DROPPED = "empty thought dropped from history"
    HEADER_DIFFERS = "turn header differs from the generation prompt"
    THOUGHT_REWRITTEN = "thought rewritten"
    CONTENT_REWRITTEN = "content rewritten"
    CALL_RESERIALISED = "arguments re-serialised"
    STOP_MISSING = "stop missing"
    STOP_DOUBLED = "stop doubled"


ADVICE = {
    Break.SYSTEM_MOVED: "render the whole prompt each turn: the cache holds only up to the system prompt",
    Break.TOOLS_MOVED: "render the whole prompt each turn: the cache holds only up to the tool list",
    Break.HISTORY_THOUGHT_DROPPED: "strip earlier thoughts from the cache when the next turn starts",
    Break.HISTORY_REWRITTEN: "render the whole prompt again; reuse the cache up to the first changed byte",
    Break.THOUGHT_DROPPED: "strip the thought from the reply before appending it",
    Break.EMPTY_THOUGHT_DROPPED: "strip the generation prompt's empty thought before appending the reply",
    Break.HEADER_DIFFERS: "replace the generation prompt with the template's history header before appending",
    Break.THOUGHT_REWRITTEN: "append the template's rendering of the thought, not the generated text",
    Break.CONTENT_REWRITTEN: "append the template's rendering of the content, not the generated text",
    Break.CALL_RESERIALISED: "append the template's rendering of the parsed calls, not the generated text",
    Break.STOP_MISSING: "drop the generated stop token from the cache (the template writes no turn end)",
    Break.STOP_DOUBLED: "append the template's extra turn-end text after the generated stop",
}


@dataclass(frozen=True)
class TurnPrompts:
    """One turn as rendered: the prompt (ending with its generation prompt), the reply, the next prompt."""

    prompt: str
    generation_prompt: str
    reply: str
    next_prompt: str
    reasoning: str
    content: str
    has_calls: bool
    earlier_reasoning: tuple[str, ...]
    system_text: str
    next_text: str
    tools_text: str = ""
    think_start: str = ""
    think_end: str = ""

    def thought_at(self, text: str, offset: int) -> bool:
        """Whether a thinking tag of the template starts at `offset` (after whitespace) or spans it."""
        rest = text[offset:].lstrip()
        for tag in (tag.strip() for tag in (self.think_start, self.think_end) if tag.strip()):
            if rest.startswith(tag) or any(
                text.startswith(tag, offset - back) for back in range(1, min(len(tag), offset + 1))
            ):
                return True
        return False


@dataclass(frozen=True)
class AppendCheck:
    """Whether the next prompt starts with prompt + reply; where and how not (offset into the next prompt)."""

    ok: bool
    offset: int | None = None
    expected: str = ""
    actual: str = ""
    breaks: Break | None = None


@dataclass(frozen=True)
class BoundaryCheck:
    """How many turn ends the next prompt writes between the reply and the next message (or n/a)."""

    status: str
    count: int | None = None
    span: str = ""
    breaks: Break | None = None
    offset: int | None = None


def first_difference(expected: str, actual: str) -> int:
    """The first code point where two texts differ (the shorter length when one extends the other)."""
    return common_prefix_length(expected, actual)


def classify(turn: TurnPrompts, offset: int) -> Break:
    """The break at `offset`, the first code point where the next prompt leaves prompt + reply."""
    following = turn.next_prompt
    header_start = len(turn.prompt) - len(turn.generation_prompt)
    if offset < header_start:
        for text, moved in ((turn.system_text, Break.SYSTEM_MOVED), (turn.tools_text, Break.TOOLS_MOVED)):
            if text and turn.prompt.find(text) != following.find(text):
                return moved
        dropped = any(thought and thought not in following for thought in turn.earlier_reasoning)
        if dropped or turn.thought_at(turn.prompt, offset):
            return Break.HISTORY_THOUGHT_DROPPED
        return Break.HISTORY_REWRITTEN
    if turn.reasoning and turn.reasoning not in following[header_start:]:
        return Break.THOUGHT_DROPPED
    if offset < len(turn.prompt):
        if (
            not turn.reasoning
            and turn.thought_at(turn.prompt, offset)
            and not turn.thought_at(following, offset)
        ):
            return Break.EMPTY_THOUGHT_DROPPED
        return Break.HEADER_DIFFERS
    at = offset - len(turn.prompt)
    reply = turn.reply
    thought_end = reply.find(turn.reasoning) + len(turn.reasoning) if turn.reasoning else 0
    if turn.reasoning and at <= thought_end:
        return Break.THOUGHT_REWRITTEN
    content_end = reply.find(turn.content, thought_end) + len(turn.content) if turn.content else thought_end
    if turn.has_calls and at >= content_end:
        return Break.CALL_RESERIALISED
    return Break.CONTENT_REWRITTEN


def append_check(turn: TurnPrompts) -> AppendCheck:
    """prompt N+1 starts with prompt N + reply, or the first differing offset, both sides and the break."""
    expected = turn.prompt + turn.reply
    offset = first_difference(expected, turn.next_prompt)
    if offset == len(expected):
        return AppendCheck(True)
    return AppendCheck(
        False,
        offset,
        excerpt(expected, offset),
        excerpt(turn.next_prompt, offset),
        classify(turn, offset),
    )


def boundary_check(turn: TurnPrompts, turn_ends: tuple[str, ...]) -> BoundaryCheck:
    """Exactly one of the template's turn ends between the reply and the next message's text.

    A turn end that closes a pair the reply opened (<|END_TEXT|> after <|START_TEXT|>) is part of the reply's
    own layout, not a stop.
    """
    if not turn_ends:
        return BoundaryCheck("n/a")
    start = len(turn.prompt) + len(turn.reply)
    after = turn.next_prompt[start:]
    found = after.find(turn.next_text) if turn.next_text else -1
    span = after[:found] if found >= 0 else after
    stops = [end for end in turn_ends if not closes_a_pair(end, turn.reply)]
    count = sum(span.count(end) for end in stops)
    if count == 1:
        return BoundaryCheck("ok", count, span)
    return BoundaryCheck(
        "missing" if count == 0 else "doubled",
        count,
        span,
        Break.STOP_MISSING if count == 0 else Break.STOP_DOUBLED,
        start,
    )
