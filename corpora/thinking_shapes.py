"""Thinking shapes: replies that place a template's own thinking tags in every way a model might."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from chatparity.model import Message, Reply
from corpora.skips import Skip

ORIGIN = "thinking"
REASONING = "The user asks about the weather, so I answer directly."
CONTENT = "It is sunny in Rio today."
SECOND = "That is all."


class ThinkingShape(str, Enum):
    """The thinking shapes, each a way to place the thinking tags in a reply."""

    LEADING_THOUGHT = "leading_thought"
    NO_THOUGHT = "no_thought"
    EMPTY_THOUGHT = "empty_thought"
    BARE_END_TAG = "bare_end_tag"
    START_AFTER_TEXT = "start_tag_after_text"
    SECOND_END_TAG = "second_end_tag"
    UNCLOSED_THOUGHT = "unclosed_thought"
    WHITESPACE_AROUND_TAGS = "whitespace_around_tags"
    WHITESPACE_BEFORE_START = "whitespace_before_start"
    TAGS_IN_ARGUMENT = "tags_in_argument"


OUT_OF_PLACE_TAGS = (ThinkingShape.BARE_END_TAG, ThinkingShape.START_AFTER_TEXT, ThinkingShape.SECOND_END_TAG)
MEANT_PROBLEMS = {ThinkingShape.UNCLOSED_THOUGHT: ("unclosed_think",)}
QUICK_SHAPES = (
    ThinkingShape.LEADING_THOUGHT,
    ThinkingShape.BARE_END_TAG,
    ThinkingShape.START_AFTER_TEXT,
    ThinkingShape.SECOND_END_TAG,
    ThinkingShape.UNCLOSED_THOUGHT,
)


@dataclass(frozen=True)
class ThinkFrame:
    """What the thinking shapes of one session are built from."""

    start: str
    end: str
    opened: bool
    thinking: bool
    closed_by_prompt: bool = False
    content_allowed: bool = True
    content_before: str = ""
    content_after: str = ""
    tags_in_argument: str | None = None
    tags_in_argument_truth: Message | None = None
    tags_in_argument_reason: str = ""

    @property
    def lead(self) -> str:
        """What opens a thought at the start of the reply ('' when the prompt already opened it)."""
        return "" if self.opened else self.start

    @property
    def plain_content(self) -> bool:
        """Whether the template writes a content-only turn as the bare content."""
        return not self.content_before.strip() and not self.content_after.strip()

    def content(self, text: str) -> str:
        """Content text as the template wraps it."""
        return f"{self.content_before}{text}{self.content_after}"


def thought_truth(frame: ThinkFrame, reasoning: str) -> Message | None:
    """The reading of a leading thought followed by content, when it is certain: thinking is on, a plain
    answer is allowed (tool_choice is not required), the template writes content bare, and the prompt opened
    the thought or left none closed."""
    if not (frame.plain_content and frame.thinking and frame.content_allowed):
        return None
    if not frame.opened and frame.closed_by_prompt:
        return None
    return Message(content=CONTENT, reasoning_content=reasoning)


def shape_text(frame: ThinkFrame, shape: ThinkingShape) -> tuple[str, Message | None]:
    """The reply text of one shape (adapted to a prompt that opened the thought) and its truth if known."""
    lead, end, start = frame.lead, frame.end, frame.start
    content, second = frame.content(CONTENT), frame.content(SECOND)
    inside = REASONING + end if frame.opened else ""
    if shape is ThinkingShape.LEADING_THOUGHT:
        return f"{lead}{REASONING}{end}{content}", thought_truth(frame, REASONING)
    if shape is ThinkingShape.NO_THOUGHT:
        if frame.opened:
            return f"{end}{content}", thought_truth(frame, "")
        return content, Message(content=CONTENT) if frame.plain_content and frame.content_allowed else None
    if shape is ThinkingShape.EMPTY_THOUGHT:
        return f"{lead}{end}{content}", thought_truth(frame, "")
    if shape is ThinkingShape.BARE_END_TAG:
        return f"{inside}{CONTENT}{end}{second}", None
    if shape is ThinkingShape.START_AFTER_TEXT:
        return f"{inside}{CONTENT}{start}{REASONING}{end}{second}", None
    if shape is ThinkingShape.SECOND_END_TAG:
        return f"{lead}{REASONING}{end}{CONTENT}{end}{second}", None
    if shape is ThinkingShape.UNCLOSED_THOUGHT:
        return f"{lead}{REASONING}", None
    if shape is ThinkingShape.WHITESPACE_AROUND_TAGS:
        return f"{lead}\n  {REASONING}  \n{end}\n\n{content}\n", None
    if shape is ThinkingShape.WHITESPACE_BEFORE_START:
        return f" \n{lead}{REASONING}{end}{content}", None
    raise ValueError(f"no text rule for thinking shape {shape.value!r}")


def thinking_replies(frame: ThinkFrame, shapes: tuple[ThinkingShape, ...]) -> tuple[list[Reply], list[Skip]]:
    """The replies of the given shapes for one session, and the shapes it could not make."""
    replies: list[Reply] = []
    skips: list[Skip] = []
    for shape in shapes:
        if shape is ThinkingShape.TAGS_IN_ARGUMENT:
            if frame.tags_in_argument is None:
                skips.append(Skip(ORIGIN, shape.value, frame.tags_in_argument_reason))
                continue
            replies.append(Reply(frame.tags_in_argument, False, ORIGIN, shape.value,
                                 frame.tags_in_argument_truth, "a call whose code argument holds the think tags"))
            continue
        text, truth = shape_text(frame, shape)
        note = "reply starts inside the thought the prompt opened" if frame.opened else ""
        exempt, meant = exempt_checks(frame, shape, truth), MEANT_PROBLEMS.get(shape, ())
        replies.append(Reply(text, False, ORIGIN, shape.value, truth, note, exempt, meant))
    return replies, skips


def exempt_checks(frame: ThinkFrame, shape: ThinkingShape, truth: Message | None) -> tuple[str, ...]:
    """The structural checks a shape breaks on purpose: without a truth, a tag written out of place, or a
    thought written while thinking is off, may stay in the text (`no_leakage`)."""
    if truth is None and (shape in OUT_OF_PLACE_TAGS or not frame.thinking):
        return ("no_leakage",)
    return ()


def tags_argument(start: str, end: str) -> str:
    """A code argument that quotes the thinking tags."""
    return f'print("{start}draft{end}")\nfinal = "{end}"'


def content_wrap(written: str | None, end: str) -> tuple[str, str]:
    """What a template writes around the content of a content-only turn, minus any empty thought before it."""
    if written is None or CONTENT not in written:
        return "", ""
    before, after = written.split(CONTENT, 1)
    if end and end in before:
        before = before[before.rindex(end) + len(end):]
    return before.lstrip(), after
