"""Isolating what a template writes for one assistant turn, by differential rendering."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chatparity.model import common_prefix_length

MARKER_PATTERN = re.compile(
    r"<\|[^<>|\s]{1,48}\|>"  # <|im_end|>, <|tool_call:begin|>
    r"|<｜[^｜<>]{1,48}｜>"  # <｜end▁of▁sentence｜>
    r"|</?｜DSML｜\w+"  # <｜DSML｜invoke
    r"|\[/?[A-Z][A-Z_]{1,30}\]"  # [TOOL_CALLS], [/THINK]
    r"|</?[A-Za-z][\w:.]{0,40}>"  # <think>, </tool_call>, <seed:eos>
    r"|<[A-Za-z]\w{0,30}="  # <function=, <parameter=
    r"|<\|[\w\"]{1,24}>|<\w{1,24}\|>"  # <|turn>, <turn|>, <|"|>
    r"|\]~!?b\]|\[e~\[|\]<\]\w+\[>\["  # MiniMax ]~b] [e~[ ]<]minimax[>[
)


@dataclass(frozen=True)
class TurnText:
    """What a template wrote for an assistant turn as a model would reply it, or None and why not."""

    text: str | None
    reason: str = ""


def find_markers(text: str) -> list[str]:
    """The special markers in a text, in order of appearance."""
    return MARKER_PATTERN.findall(text)


def generation_prompt(prompt_without: str, prompt_with: str) -> str:
    """The generation prompt as llama.cpp finds it: the render with it minus the common prefix of both."""
    return prompt_with[common_prefix_length(prompt_without, prompt_with) :]


def opens_thought(gp: str, think_start: str, think_end: str) -> bool:
    """Whether a generation prompt ends inside a thought (its last start tag is not closed after it)."""
    if not think_start or think_start not in gp:
        return False
    tail = gp[gp.rfind(think_start) + len(think_start) :]
    return not (think_end and think_end in tail)


def _drop_empty_thought(body: str, think_start: str, think_end: str) -> str:
    """The body without a leading empty thought (start tag, whitespace, end tag) or a bare end tag."""
    rest = body.removeprefix(think_start)
    if think_end and rest.lstrip().startswith(think_end):
        return rest.lstrip()[len(think_end) :]
    return body


def turn_body(
    prompt_without: str,
    prompt_with: str,
    rendered: str,
    think_start: str,
    think_end: str,
    has_reasoning: bool,
    eos: str = "",
) -> TurnText:
    """The turn's text after the generation prompt, inside any thought it opens, end of turn kept."""
    if eos and prompt_without.endswith(eos) and not prompt_with.endswith(eos):
        prompt_without = prompt_without[: -len(eos)]
    if not rendered.startswith(prompt_without):
        return TurnText(None, "the template renders the history differently once an assistant turn follows")
    turn = rendered[len(prompt_without) :]
    gp = generation_prompt(prompt_without, prompt_with)
    thought_open = opens_thought(gp, think_start, think_end)
    if turn.startswith(gp):
        body = turn[len(gp) :]
        if thought_open and think_end not in body and not has_reasoning:
            return TurnText(think_end + body, "empty thought closed: the history turn leaves it open")
        return TurnText(body)
    tags = [tag for tag in (think_start, think_end) if tag and tag in gp]
    cut = gp.rfind(tags[0]) if tags else -1
    if cut < 0 or not turn.startswith(gp[:cut]):
        return TurnText(None, "the template writes the turn's header differently from its generation prompt")
    if has_reasoning and thought_open:
        return TurnText(None, "the history turn writes the thought differently from the generation prompt")
    if has_reasoning:
        return TurnText(
            None, "the generation prompt closes the thought, so the turn's reasoning cannot follow it"
        )
    body = turn[cut:]
    if thought_open:
        body = body.removeprefix(think_start)
        if body.lstrip().startswith(think_end):
            return TurnText(body, "the model closes the empty thought")
        return TurnText(think_end + body, "empty thought closed: the history turn has none")
    return TurnText(
        _drop_empty_thought(body, think_start, think_end),
        "the generation prompt closes an empty thought the history turn writes differently",
    )


def strip_end_of_turn(text: str, end_of_turn: tuple[str, ...], payload_end: int = 0) -> str:
    """The text cut at the first end-of-turn marker after the turn's payload, trailing whitespace removed."""
    cuts = [text.find(marker, payload_end) for marker in end_of_turn if marker]
    cuts = [cut for cut in cuts if cut >= 0]
    return (text[: min(cuts)] if cuts else text).rstrip()


CLOSER_WORDS = ("end", "suffix", "close")
OPENER_WORDS = ("begin", "start", "prefix", "open")


def _stem(marker: str, words: tuple[str, ...]) -> str:
    """A marker's name without punctuation and without the given words."""
    stem = re.sub(r"[<>|\[\]/｜\s]", "", marker.lower())
    for word in words:
        stem = stem.replace(word, "")
    return stem


def closes_a_pair(marker: str, text: str) -> bool:
    """Whether a marker closes a pair another marker of the text opens (</x>, *_end, *_suffix)."""
    closer = marker.startswith(("</", "[/")) or any(word in marker.lower() for word in CLOSER_WORDS)
    if not closer:
        return False
    stem = _stem(marker, CLOSER_WORDS)
    return any(_stem(other, OPENER_WORDS) == stem for other in find_markers(text) if other != marker)


def common_suffix(first: str, second: str) -> str:
    """The longest common suffix of two texts."""
    size = common_prefix_length(first[::-1], second[::-1])
    return first[len(first) - size :]
