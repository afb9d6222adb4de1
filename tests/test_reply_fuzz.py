"""Replies generated from each syntax's own markers (its call openings, thinking tags, the template's special
tokens) mixed with JSON and prose: reading them raises nothing but Rejected, streams in any chunking never take
back what they showed and end as the whole parse (a cut reply as its last snapshot, or both refused), and no
finished call has arguments that are not a JSON object. REPLY_FUZZ_EXAMPLES sets the replies per syntax (a long run: REPLY_FUZZ_EXAMPLES=3000)."""

from __future__ import annotations

import json
import os
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reply
from templates.index import load_index
from tests.reply_support import SYNTAX_TEMPLATES, sessions

EXAMPLES = int(os.environ.get("REPLY_FUZZ_EXAMPLES", "12"))
FRAGMENTS = ['{"name": "get_weather", "arguments": ', '{"city": "Rio", "days": 4}', '{"city": ', '"Rio"', "4",
             "three", "[", "]", "{", "}", '"', ",", ":", "\\", "\n", " ", "Hello", "get_weather", "get_time",
             "city", "days", "true", "null", "=", ">", "<", "</", "\n\n", "functions.", "json"]


@cache
def reader_and_pieces(template: str) -> tuple[reply.Reader, tuple[str, ...]]:
    """A reader of the template's first session and the pieces replies are made of."""
    reader = reply.open(sessions(template)[0])
    starts = reader.syntax.call_starts(reader.template, reader.request)
    own = [*reader.markers, *starts, *load_index()[template].markers]
    return reader, tuple(dict.fromkeys([piece for piece in own if piece] + FRAGMENTS))


def retraction(before: reply.Message, after: reply.Message) -> str:
    """What `after` takes back from `before` ('' when nothing)."""
    if not (after.content.startswith(before.content)
            and after.reasoning_content.startswith(before.reasoning_content)):
        return "text retracted"
    if len(after.tool_calls) < len(before.tool_calls):
        return "a call vanished"
    for old, new in zip(before.tool_calls, after.tool_calls):
        if not (new.name.startswith(old.name) and new.arguments.startswith(old.arguments)):
            return f"call changed: {old} -> {new}"
    return ""


def object_arguments(message: reply.Message) -> bool:
    """Whether every call's arguments are a JSON object."""
    try:
        return all(isinstance(json.loads(call.arguments), dict) for call in message.tool_calls)
    except ValueError:
        return False


@pytest.mark.parametrize("template", [names[0] for names in SYNTAX_TEMPLATES.values()])
def test_generated_replies_keep_every_promise(template: str) -> None:
    """Whole parse, and streams of random chunks, of replies made from the syntax's own pieces."""
    reader, pieces = reader_and_pieces(template)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(parts=st.lists(st.sampled_from(pieces), max_size=16), sizes=st.lists(st.integers(1, 12), min_size=1))
    def check(parts: list[str], sizes: list[int]) -> None:
        text = "".join(parts)
        try:
            whole: reply.Message | None = reader.parse(text)
        except reply.Rejected:
            whole = None
        assert whole is None or object_arguments(whole), text
        try:
            cut: reply.Message | None = reader.parse(text, partial=True)
        except reply.Rejected:
            cut = None
        stream = reader.stream()
        shown = reply.Message()
        last: reply.Message | None = shown
        position, turn = 0, 0
        while position < len(text):
            size = sizes[turn % len(sizes)]
            try:
                snapshot = last = stream.feed(text[position:position + size])
            except reply.Rejected:
                snapshot, last = shown, None
            assert retraction(shown, snapshot) == "", (text, text[:position + size])
            shown, position, turn = snapshot, position + size, turn + 1
        assert not text or last == cut, text
        try:
            final: reply.Message | None = stream.finish()
        except reply.Rejected:
            final = None
        assert final == whole, text
        assert final is None or retraction(shown, final) == "", text

    check()


def cut_reading(reader: reply.Reader, text: str) -> reply.Message | None:
    """`parse(text, partial=True)`, None when refused."""
    try:
        return reader.parse(text, partial=True)
    except reply.Rejected:
        return None


def streamed(reader: reply.Reader, chunks: list[str]) -> tuple[reply.Message | None, str]:
    """A stream's last snapshot (None when its last feed is refused) and what it took back ('' when nothing)."""
    stream, shown = reader.stream(), reply.Message()
    last: reply.Message | None = shown
    for chunk in chunks:
        try:
            last = stream.feed(chunk)
        except reply.Rejected:
            last = None
            continue
        taken = retraction(shown, last)
        if taken:
            return last, taken
        shown = last
    return last, ""


def repeated_marker_starts(markers: tuple[str, ...], lead: str) -> list[str]:
    """Cut replies ending with a marker start written again: `lead`, the start (or all) of a marker, then the
    start of the same marker once more (e.g. '</</', '<tool_call><tool_call')."""
    texts = []
    for marker in markers:
        for first in sorted({1, len(marker) // 2, len(marker)}):
            for second in sorted({1, 2, len(marker) - 1} - {0}):
                texts.append(lead + marker[:first] + marker[:second])
    return texts


GIGACHAT_REPEATED_RUN = ("</assistant_guidelines><|message_sep|><|message_sep|>\n\nfunction call<|role_sep|>\n"
                         "</assistant_guidelines><|message_sep|>")
REPEATED = [("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "Hello</</"),
            ("GigaChat3-10B-A1.8B.jinja", "Hi<|message_sep|><|message_sep|>"),
            ("Bielik-11B-v3.0-Instruct.jinja", "x</think>Hi<tool_call><tool_call>"),
            ("MiniMax-M1.jinja", "Hello<tool_calls><tool_calls>"),
            ("MiniMax-M2.jinja", "x</think>Hi<minimax:tool_call><minimax:tool_call>"),
            ("MiniMax-M3.jinja", "Hello</invoke>]<]minimax[>[<]<]minimax[>[<"),
            ("inclusionai-ling-3.0-flash.jinja", "<tool_call>get_weather<tool_call>"),
            ("NVIDIA-Nemotron-Nano-v2.jinja", "x</think>Hi<T<TOOLCALL"),
            ("NVIDIA-Nemotron-Nano-v2.jinja", "</</</"),
            ("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", "Hello<t<tool_call"),
            ("ByteDance-Seed-OSS.jinja", "</seed:think><seed:tool_call><seed:tool_call>"),
            ("GigaChat3-10B-A1.8B.jinja", GIGACHAT_REPEATED_RUN)]


def test_content_ending_far_before_a_marker_start_keeps_a_copy_of_it() -> None:
    """GigaChat3 content read before a call it cannot read ends with the same 38 characters as the reply, whose
    end is a marker start: the cut read holds back only what lies inside that marker start (nothing of the
    content), as its streams show."""
    reader, _ = reader_and_pieces("GigaChat3-10B-A1.8B.jinja")
    cut = cut_reading(reader, GIGACHAT_REPEATED_RUN)
    assert cut is not None and cut.content == "</assistant_guidelines><|message_sep|>"


@pytest.mark.parametrize(("template", "text"), REPEATED)
def test_cut_reply_ending_with_a_marker_start_again_reads_as_its_streams(template: str, text: str) -> None:
    """A reply cut where a marker starts again right after its own start: every chunking's last snapshot
    is `parse(partial=True)`, and no stream takes back what it showed."""
    reader, _ = reader_and_pieces(template)
    cut = cut_reading(reader, text)
    chunkings = [[text[i:i + size] for i in range(0, len(text), size)] for size in (1, 2, 3, 5)]
    chunkings += [[text[:split], text[split:]] for split in range(1, len(text))]
    for chunks in chunkings:
        last, taken = streamed(reader, chunks)
        assert taken == "", (text, chunks, taken)
        assert last == cut, (text, chunks, last, cut)


@pytest.mark.parametrize("template", [names[0] for names in SYNTAX_TEMPLATES.values()])
def test_every_marker_start_repeated_reads_as_its_streams(template: str) -> None:
    """For each of the syntax's markers, replies (after text, and after a closed thought) cut inside that
    marker's start written twice: the character-by-character and 3-character streams end on
    `parse(partial=True)` and never take back."""
    reader, _ = reader_and_pieces(template)
    for text in [text for lead in ("Hello", "x</think>Hi") for text in repeated_marker_starts(reader.markers, lead)]:
        cut = cut_reading(reader, text)
        for size in (1, 3):
            last, taken = streamed(reader, [text[i:i + size] for i in range(0, len(text), size)])
            assert taken == "", (text, size, taken)
            assert last == cut, (text, size, last, cut)
