"""Streams of a session that share a start (`harness.stream_resume`): llama.cpp streams on from the last shared cut
that kept a message, and the reads are the whole stream's, checked against llama.cpp streaming each reply whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chatparity.model import Message, Reading, Rejection
from corpora import catalog
from harness import oracle_reads
from harness.oracle_reads import OracleIdentity, OracleReads, OracleSession
from harness.stream_resume import Streamed, resume_point, shared_cuts
from oracle.partial_reads import encoded, same

TEXT = "<think>rain</think>Il pleut"
READS: list[Reading] = [Message(), Message(reasoning_content="r"), Rejection("cut"), Rejection("cut"),
                        Message(content="I")]


def earlier(text: str, ends: list[int], reads: list[Reading]) -> Streamed:
    """An earlier stream of `text` with its reads written as the cache writes them."""
    return Streamed(text, tuple(ends), encoded(reads))


@pytest.mark.parametrize(
    ("text", "ends", "before", "shared"),
    [
        (TEXT, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 5),
        (TEXT[:3] + "X" + TEXT[4:], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 3),
        (TEXT, [1, 2, 4, 5], [1, 2, 3, 4, 5], 2),
        (TEXT, [1, 2, 3, 4, 5, 6], [1, 2, 3], 3),
        (TEXT[:4], [1, 2, 3, 4], [1, 2, 3, 4, 5], 4),
        ("X" + TEXT, [1, 2, 3], [1, 2, 3], 0),
    ],
    ids=["same", "text-differs-after-3", "cut-missing", "earlier-shorter", "a-prefix", "nothing"],
)
def test_cuts_are_shared_up_to_the_first_differing_cut_or_text(
    text: str, ends: list[int], before: list[int], shared: int
) -> None:
    assert shared_cuts(earlier(TEXT, before, READS[:len(before)]), text, ends) == shared


def test_a_stream_resumes_at_the_last_shared_cut_that_kept_a_message_from_the_stream_sharing_most() -> None:
    short = earlier(TEXT, [1, 2], READS[:2])
    long = earlier(TEXT, [1, 2, 3, 4, 5], READS)
    assert long.written[3] == 0
    found = resume_point([short, long], TEXT, [1, 2, 3, 4, 5, 6])
    assert found is not None and found.at == 4 and found.written == long.written and found.last == READS[4]
    rejected_last = resume_point([long], TEXT[:4] + "X", [1, 2, 3, 4, 5])
    assert rejected_last is not None and rejected_last.at == 1
    assert rejected_last.written == long.written[:2] and rejected_last.last == READS[1]


@pytest.mark.parametrize(
    ("streams", "text"),
    [([], TEXT), ([earlier(TEXT, [1], READS[:1])], TEXT), ([earlier("X", [1], READS[:1])], TEXT)],
    ids=["no-earlier-stream", "one-shared-cut", "no-shared-cut"],
)
def test_no_resume_without_a_message_kept_after_the_first_shared_cut(streams: list[Streamed], text: str) -> None:
    assert resume_point(streams, text, [1, 2, 3]) is None


@pytest.fixture
def reads() -> Iterator[OracleReads]:
    """llama.cpp without a cache."""
    found = OracleReads(OracleIdentity.of(), None)
    yield found
    found.close()


@pytest.fixture
def stream_cuts(reads: OracleReads, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The cut count of each stream request `reads` makes, in order."""
    counts: list[int] = []
    asked = reads.ask

    def ask(op: str, *args: Any, **kwargs: Any) -> Any:
        if op == "stream":
            counts.append(len(args[2]))
        return asked(op, *args, **kwargs)

    monkeypatch.setattr(reads, "ask", ask)
    return counts


def whole_stream(session: OracleSession, text: str, ends: list[int]) -> list[Reading]:
    """llama.cpp's reads at `ends` streamed in one request."""
    handle = session.ensure_handle()
    return session.reads.client.stream(handle, text, ends).partials


@pytest.mark.parametrize(
    ("template", "mode"),
    [
        ("Qwen-Qwen3-0.6B.jinja", "think/auto"),
        ("openai-gpt-oss-120b.jinja", "think/parallel"),
        ("deepseek-ai-DeepSeek-V3.1.jinja", "nothink/auto"),
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "nothink/required"),
    ],
)
def test_a_sessions_streams_read_as_llama_cpp_streams_each_whole_asking_fewer_cuts(
    reads: OracleReads, stream_cuts: list[int], template: str, mode: str
) -> None:
    planned = next(iter(catalog.plan("quick", templates=template, mode=mode)))
    session = reads.session(planned.session)
    streamed = asked = 0
    for number, reply in enumerate(catalog.replies(planned, "quick")):
        size = len(reply.text)
        ends = list(range(1, size + 1)) if number % 2 else sorted({*range(2, size + 1, 2), *range(3, size + 1, 3)})
        if not ends:
            continue
        before = len(stream_cuts)
        found = dict(session.partials(reply.text, ends).items())
        asked += sum(stream_cuts[before:])
        streamed += len(ends)
        whole = whole_stream(session, reply.text, ends)
        assert all(same(found[end], read) for end, read in zip(ends, whole)), reply.text
    assert streamed > 1000 and asked < streamed * 0.8, (asked, streamed)


def test_an_earlier_stream_llama_cpp_does_not_confirm_costs_a_whole_stream(
    reads: OracleReads, stream_cuts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    planned = next(iter(catalog.plan("quick", templates="Qwen-Qwen3-0.6B.jinja", mode="think/auto")))
    text = max(catalog.replies(planned, "quick"), key=lambda found: len(found.text)).text
    ends = list(range(1, len(text) + 1))
    wrong = [Message(content=f"not llama.cpp's read {end}") for end in ends]
    session = reads.session(planned.session)
    session.streams.append(Streamed(text, tuple(ends), encoded(wrong)))
    whole = whole_stream(session, text, ends)
    found = dict(session.partials(text, ends).items())
    assert all(same(found[end], read) for end, read in zip(ends, whole))
    assert stream_cuts == [1, len(ends)]
    unchecked = reads.session(planned.session)
    unchecked.streams.append(Streamed(text, tuple(ends), encoded(wrong)))
    monkeypatch.setattr(oracle_reads, "same", lambda first, second: True)
    assert next(unchecked.partials(text, ends).items()) == (ends[0], wrong[0])
