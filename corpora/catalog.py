"""The catalog: every session a sweep runs and every reply it reads in each, by profile."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from chatparity.model import Profile, Reply, ToolMode, profile_named
from corpora import call_shapes, fuzz, partials, planning, roundtrip, thinking_shapes
from corpora.call_shapes import CallFrame, CallShape, Turn, tool_set
from corpora.conversations import Conversation
from corpora.corpus_file import FilePlannedSession, file_sessions
from corpora.partials import CutPoint, Landmarks
from corpora.planning import PlannedSession
from corpora.skips import Skip
from corpora.thinking_shapes import ThinkFrame, ThinkingShape, content_wrap
from corpora.tools import STANDARD_TOOLS
from corpora.written_turns import written_turns


@dataclass(frozen=True)
class Budget:
    """The shapes a profile makes for each single-turn session."""

    thinking: tuple[ThinkingShape, ...]
    calls: tuple[CallShape, ...]
    all_partial_sources: bool
    fuzz_count: int


QUICK_CALL_CUTS: tuple[CutPoint, ...] = (
    CutPoint.IN_CALL_MARKER, CutPoint.AFTER_CALL_MARKER, CutPoint.IN_NAME, CutPoint.IN_ARGUMENTS
)
QUICK_THOUGHT_CUTS: tuple[CutPoint, ...] = (CutPoint.IN_MARKER, CutPoint.IN_THOUGHT)
QUICK_CLOSING_CUTS: tuple[CutPoint, ...] = (CutPoint.IN_SPACE_BEFORE_CLOSING, CutPoint.IN_CLOSING)
BUDGETS = {
    Profile.QUICK: Budget(thinking_shapes.QUICK_SHAPES, call_shapes.QUICK_SHAPES, False, 2),
    Profile.FULL: Budget(tuple(ThinkingShape), tuple(CallShape), True, 16),
    Profile.SERVER: Budget(thinking_shapes.QUICK_SHAPES, call_shapes.QUICK_SHAPES, False, 2),
}


@dataclass(frozen=True)
class SessionCorpus:
    """The replies of one session and the shapes left out of it."""

    replies: tuple[Reply, ...]
    skips: tuple[Skip, ...]


def plan(profile: str = "quick", templates: str | None = None, family: str | None = None,
         mode: str | None = None, corpus_file: Path | None = None) -> list[PlannedSession]:
    """Every session of a profile (templates: a glob on the file name; mode: a glob on Mode.label), or, when a
    corpus file is given, the sessions of that file alone."""
    if corpus_file is not None:
        return list(file_sessions(Path(corpus_file), templates, family, mode))
    return list(planning.plan(profile_named(profile).value, templates, family, mode))


def think_frame(planned: PlannedSession, written: dict[Turn, call_shapes.Written]) -> ThinkFrame:
    """The thinking-shape frame of a session."""
    entry = planned.entry
    content = written.get(Turn.CONTENT)
    tags = written.get(Turn.TAGS_IN_ARGUMENT)
    before, after = content_wrap(content.text if content else None, entry.think_end)
    truth = None
    if tags is not None and tags.text is not None and not tags.hand and \
            planned.session.mode.tools in call_shapes.CALLING_MODES:
        truth = roundtrip.truth_of(tags.message, tags.text)
    prompt = planned.session.prompt or ""
    return ThinkFrame(
        entry.think_start, entry.think_end, planned.opens_thought, planning.thinks(planned.session.mode),
        bool(entry.think_end) and prompt.rstrip().endswith(entry.think_end),
        planned.session.mode.tools is not ToolMode.REQUIRED, before, after,
        tags.text if tags else None, truth,
        (tags.reason if tags else "") or "the template writes no call with the tags in an argument",
    )


def landmarks(planned: PlannedSession, found: list[Reply]) -> Landmarks:
    """What partial cuts look for in this session's replies."""
    entry = planned.entry
    truths = [reply.truth for reply in found if reply.truth is not None]
    thoughts = tuple(t.reasoning_content for t in truths if t.reasoning_content)
    names = tuple(call_shapes.tool_name(t) for t in planned.session.tool_defs or STANDARD_TOOLS)
    return Landmarks(
        markers=tuple(entry.markers) + (entry.think_start, entry.think_end),
        thoughts=(thinking_shapes.REASONING, call_shapes.THOUGHT_PREFIX.strip()) + thoughts,
        names=names + (call_shapes.UNKNOWN_TOOL,),
        values=("Rio", "東京", "moon", "python"),
    )


def partial_sources(found: list[Reply], budget: Budget) -> list[tuple[Reply, tuple[CutPoint, ...]]]:
    """The finished replies a profile cuts and where: every reply at every point, or in quick one round-trip
    call at its call marker, name and arguments, one leading thought inside its marker and its thought, one
    call with broken arguments past its first argument value (inside the broken call), and one call with
    whitespace before its closing tag inside that whitespace and inside the tag."""
    finished = [reply for reply in found if not reply.partial]
    if budget.all_partial_sources:
        return [(reply, tuple(CutPoint)) for reply in finished]
    with_call = [r for r in finished if r.origin == roundtrip.ORIGIN and r.truth and r.truth.tool_calls]
    thought = [r for r in finished if r.shape == ThinkingShape.LEADING_THOUGHT.value]
    broken = [r for r in finished if r.shape == CallShape.MALFORMED_ARGUMENTS.value]
    spaced = [r for r in finished if r.shape == CallShape.SPACED_CLOSING.value]
    return (
        [(r, QUICK_CALL_CUTS) for r in with_call[:1]]
        + [(r, QUICK_THOUGHT_CUTS) for r in thought[:1]]
        + [(r, (CutPoint.PAST_ARGUMENT,)) for r in broken[:1]]
        + [(r, QUICK_CLOSING_CUTS) for r in spaced[:1]]
    )


def shape_corpus(planned: PlannedSession, budget: Budget) -> tuple[list[Reply], list[Skip]]:
    """The thinking and call shapes of one single-turn session, and the shapes it could not make."""
    entry = planned.entry
    tools = tool_set(tuple(planned.session.tool_defs) or STANDARD_TOOLS)
    turns: tuple[Turn, ...] = (Turn.CONTENT,)
    if ThinkingShape.TAGS_IN_ARGUMENT in budget.thinking:
        turns += (Turn.TAGS_IN_ARGUMENT,)
    turns += tuple(call_shapes.NATIVE_SHAPES[shape] for shape in budget.calls if shape in call_shapes.NATIVE_SHAPES)
    written = {} if isinstance(tools, str) else written_turns(planned, tools, turns)
    replies: list[Reply] = []
    skips: list[Skip] = []
    if entry.think_start and entry.think_end:
        made, skipped = thinking_shapes.thinking_replies(think_frame(planned, written), budget.thinking)
        replies += made
        skips += skipped
    else:
        skips += [Skip(thinking_shapes.ORIGIN, s.value, "the template has no thinking tags") for s in budget.thinking]
    if isinstance(tools, str):
        return replies, skips + [Skip(call_shapes.ORIGIN, shape.value, tools) for shape in budget.calls]
    frame = CallFrame(tools, planned.session.mode.tools, written, tuple(entry.markers), entry.think_start,
                      entry.think_end, planned.opens_thought)
    made, skipped = call_shapes.call_replies(frame, budget.calls)
    return replies + made, skips + skipped


def unique(found: list[Reply]) -> list[Reply]:
    """The replies without repeats of the same text and partial flag (the first kept)."""
    seen: set[tuple[str, bool]] = set()
    out: list[Reply] = []
    for reply in found:
        if (reply.text, reply.partial) not in seen:
            seen.add((reply.text, reply.partial))
            out.append(reply)
    return out


def session_corpus(planned: PlannedSession, profile: str, seed: int = fuzz.DEFAULT_SEED) -> SessionCorpus:
    """Every reply of one session under a profile and the shapes left out: file replies for a corpus-file
    session; round trips for every conversation; all shapes, partial cuts and fuzz for the single turn."""
    if isinstance(planned, FilePlannedSession):
        return SessionCorpus(planned.file_replies, ())
    budget = BUDGETS[profile_named(profile)]
    found = list(roundtrip.roundtrip_replies(planned))
    if planned.session.conversation != Conversation.SINGLE.value:
        return SessionCorpus(tuple(unique(found)), ())
    shaped, skips = shape_corpus(planned, budget)
    found += shaped
    found += partials.partial_replies(partial_sources(found, budget), landmarks(planned, found))
    key = f"{planned.session.template}/{planned.session.mode.label}/{planned.session.conversation}"
    found += fuzz.fuzz_replies(landmarks(planned, []).markers, key, seed, budget.fuzz_count)
    return SessionCorpus(tuple(unique(found)), tuple(skips))


def replies(planned: PlannedSession, profile: str) -> list[Reply]:
    """All corpora's replies for one session and profile (what the sweep calls)."""
    return list(session_corpus(planned, profile).replies)


@dataclass(frozen=True)
class CorpusCounts:
    """Totals of a plan: templates, sessions, replies by origin, skipped shapes by origin."""

    templates: int
    sessions: int
    replies: dict[str, int]
    skips: dict[str, int]

    @property
    def total(self) -> int:
        """All replies."""
        return sum(self.replies.values())


def count(planned: list[PlannedSession], profile: str) -> CorpusCounts:
    """Count the templates, sessions and replies (by origin) a plan would run."""
    origins: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    for session in planned:
        corpus = session_corpus(session, profile)
        origins.update(reply.origin for reply in corpus.replies)
        skipped.update(skip.origin for skip in corpus.skips)
    return CorpusCounts(len({p.session.template for p in planned}), len(planned), dict(sorted(origins.items())),
                        dict(sorted(skipped.items())))
