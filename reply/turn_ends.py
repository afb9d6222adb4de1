"""What may follow a reply without being text after it: the end-of-sequence token, the markers a template writes
to end an assistant's answer or call, and its closing markers of thought and content."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from reply.analysis import ASSISTANT_MSG, Segment, segmentize, trim_whitespace
from reply.template import PROBE_USER, Template


def leading_markers(segments: Sequence[Segment]) -> list[str]:
    """The <…> and […] markers a run of segments starts with."""
    found = []
    for segment in segments:
        if not segment.marker:
            break
        found.append(segment.value)
    return found


@lru_cache(maxsize=64)
def turn_ends(template: Template) -> tuple[str, ...]:
    """The texts that end a turn, longest first: the eos; what the template writes after an answer up to
    whitespace, and the markers it starts and ends with; the markers its call turn ends with; the closing
    markers of thought and content."""
    found = [template.eos, trim_whitespace(template.reasoning.end), trim_whitespace(template.content.end)]
    answer = template.render_turns([PROBE_USER, {"role": "assistant", "content": ASSISTANT_MSG}])
    if answer is not None and ASSISTANT_MSG in answer:
        words = answer[answer.rfind(ASSISTANT_MSG) + len(ASSISTANT_MSG):].split()
        segments = segmentize(words[0]) if words else []
        found += [*words[:1], *leading_markers(segments), *leading_markers(segments[::-1])]
    words = template.call_turn.split()
    found += leading_markers(segmentize(words[-1])[::-1]) if words else []
    return tuple(sorted({end for end in found if end}, key=lambda end: (-len(end), end)))


def ends_turn(tail: str, template: Template) -> bool:
    """Whether a reply's tail is only whitespace and texts that end a turn (`turn_ends`)."""
    rest = tail.strip()
    while rest:
        end = next((end for end in turn_ends(template) if rest.startswith(end)), None)
        if end is None:
            return False
        rest = rest[len(end):].lstrip()
    return True
