"""Readers shared across sessions (`reply.harness.Parser`): sessions whose readers read alike share one, and a
reply any of them read before is not parsed again; each session still reads every reply as a reader of its own."""

from __future__ import annotations

from functools import partial

import pytest

import reply
from corpora.catalog import plan, replies
from reply.harness import Parser
from tests.reply_support import grammar_runs, outcome

TEMPLATES = ("Qwen-Qwen3-0.6B.jinja", "deepseek-ai-DeepSeek-V4.jinja")


def reads(reader: reply.Reader, text: str, cut: bool) -> list[object]:
    """A whole parse of `text` with its problems, and every snapshot and the finish of its streams per
    character and in 3-character chunks."""
    found: list[object] = []
    try:
        message = reader.parse(text, partial=cut)
        found.append((outcome(lambda: message), message.problems))
    except reply.Rejected as refusal:
        found.append(("rejected", refusal.problems))
    for size in (1, 3):
        stream = reader.stream()
        found += [outcome(stream.feed, text[start:start + size]) for start in range(0, len(text), size)]
        if not cut:
            found.append(outcome(stream.finish))
    return found


def read_into(found: list[object], reader: reply.Reader, text: str, cut: bool) -> None:
    """Append `reads` of the reply to `found`."""
    found.extend(reads(reader, text, cut))


@pytest.mark.parametrize("template", TEMPLATES)
def test_sessions_sharing_a_reader_read_every_reply_as_their_own_readers_do(template: str) -> None:
    """Every session a quick sweep plans for the template, opened through one harness parser: fewer readers
    than sessions, fewer grammar runs than fresh readers make, and the same reads, problems included."""
    parser = Parser()
    planned = [p for p in plan("quick", template) if p.session.conversation == "single"]
    opened, shared_runs, fresh_runs = set(), 0, 0
    for p in planned:
        shared, fresh = parser.open(p.session), reply.open(p.session)
        opened.add(id(shared))
        for r in replies(p, "quick"):
            found: list[list[object]] = [[], []]
            shared_runs += grammar_runs(shared, partial(read_into, found[0], shared, r.text, r.partial))
            fresh_runs += grammar_runs(fresh, partial(read_into, found[1], fresh, r.text, r.partial))
            assert found[0] == found[1], (p.session.mode.label, r.text)
    assert len(opened) < len(planned)
    assert shared_runs < fresh_runs


def test_a_reply_read_before_another_is_read_again_without_parsing() -> None:
    """Streams of reply A, then B, then A again on one reader: the third runs the grammar not at all."""
    (p, *_) = [p for p in plan("quick", TEMPLATES[0]) if p.session.mode.label == "think/auto"]
    texts = [r.text for r in replies(p, "quick") if len(r.text) > 20 and not r.partial][:2]
    reader = reply.open(p.session)
    first = [outcome(stream.feed, char) for stream in [reader.stream()] for char in texts[0]]
    assert grammar_runs(reader, lambda: reads(reader, texts[1], False)) > 0
    again: list[object] = []
    stream = reader.stream()
    assert grammar_runs(reader, lambda: again.extend(outcome(stream.feed, char) for char in texts[0])) == 0
    assert again == first


@pytest.mark.parametrize("template", TEMPLATES)
def test_sessions_built_from_equal_inputs_find_their_reader_without_building_a_grammar(
    template: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every session a quick sweep plans for the template, opened twice through one harness parser: a grammar is built
    once per distinct reader input (`inputs_key`), never on the second opening, and each session's shared
    reader reads as its own fresh reader would (equal `equivalence`)."""
    import reply.harness

    built: list[object] = []

    class Counted(reply.harness.Reader):
        def __init__(self, *args: object) -> None:
            built.append(args)
            super().__init__(*args)

    monkeypatch.setattr(reply.harness, "Reader", Counted)
    parser = Parser()
    sessions = [p.session for p in plan("quick", template)]
    distinct = {reply.harness.inputs_key(*reply.harness.reader_inputs(s)) for s in sessions}
    for session in sessions:
        assert parser.open(session).equivalence() == reply.open(session).equivalence()
    assert len(built) == len(distinct) < len(sessions)
    for session in sessions:
        parser.open(session)
    assert len(built) == len(distinct)
