"""What a sweep process lets go is freed at once, and its garbage collector is tuned only while it reads:
a reader the project parser stops keeping, a refusal the harness read, the collector put back after a sweep."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

import reply.harness
from chatparity.model import Rejection
from harness.collector import READING_THRESHOLDS, ReadingCollector
from harness.parsers import PythonReader, read_of
from tests.drill_support import QWEN3, corpus_file, sweep
from tests.reply_support import session

MISTRAL = "Mistral-Small-3.2-24B-Instruct-2506.jinja"
REFUSED = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }}\n</tool_call>"


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The cyclic garbage collector switched off: only reference counting frees objects."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_the_replies_here_are_refused_whole_and_streamed() -> None:
    reader = reply.open(session(QWEN3, "think/auto"))
    stream = PythonReader(reader, 30).stream(list(REFUSED), finish=True)
    assert isinstance(PythonReader(reader, 30).parse(REFUSED, False), Rejection)
    assert isinstance(stream.final, Rejection)


def test_a_reader_the_parser_stops_keeping_and_its_grammar_are_freed_without_the_collector(
    monkeypatch: pytest.MonkeyPatch, no_collector: None
) -> None:
    monkeypatch.setattr(reply.harness, "READERS_KEPT", 1)
    parser = reply.harness.Parser()
    first = parser.open(session(QWEN3, "think/auto"))
    PythonReader(first, 30).parse(REFUSED, False)
    PythonReader(first, 30).stream(list(REFUSED), finish=True)
    PythonReader(first, 30).stream(list(REFUSED[:40]), finish=False)
    assert first.records and first.finished_reads
    gone, grammar_gone = weakref.ref(first), weakref.ref(first.arena)
    del first
    parser.open(session("deepseek-ai-DeepSeek-V4.jinja", "think/auto"))
    assert gone() is None
    assert grammar_gone() is None


def kept_refusals(reader: reply.Reader) -> list[reply.Rejected]:
    """Every refusal a reader keeps: finished reads, and its records' reads and settled parses."""
    found = [read for read in reader.finished_reads.values() if isinstance(read, reply.Rejected)]
    for record in reader.records:
        found += [held for held in record.held if isinstance(held, reply.Rejected)]
        if isinstance(record.reading.settled, reply.Rejected):
            found.append(record.reading.settled)
    return found


@pytest.mark.parametrize(("template", "mode", "text"), [
    (QWEN3, "think/auto", REFUSED),
    (MISTRAL, "nothink/auto", "[TOOL_CALLS]get_time[Cx"),
])
def test_the_refusals_a_reader_keeps_hold_no_traceback(template: str, mode: str, text: str) -> None:
    reader = reply.open(session(template, mode))
    PythonReader(reader, 30).parse(text, False)
    PythonReader(reader, 30).stream(list(text), finish=True)
    refusals = kept_refusals(reader)
    assert refusals
    assert [refusal.__traceback__ for refusal in refusals] == [None] * len(refusals)


def test_a_refusal_the_harness_read_holds_no_traceback() -> None:
    kept: list[Exception] = []

    def refuse(text: str) -> None:
        """A parser call that raises a rejection it also keeps."""
        error = reply.Rejected(f"refused {text}")
        kept.append(error)
        raise error

    assert read_of(refuse, "this", problems=False) == Rejection("refused this")
    assert kept[0].__traceback__ is None


def test_the_collector_is_tuned_while_reading_and_put_back_after() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    collector = ReadingCollector()
    collector.start()
    try:
        assert gc.get_threshold() == READING_THRESHOLDS
        assert gc.get_freeze_count() > frozen
        collector.start()
        assert gc.get_threshold() == READING_THRESHOLDS
    finally:
        collector.stop()
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, 0)
    collector.stop()
    assert gc.get_threshold() == before


def test_a_sweep_in_this_process_puts_the_collector_back(tmp_path: Path) -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    original = ReadingCollector.stop

    def noted_stop(self: ReadingCollector) -> None:
        """Note the thresholds the sweep read under, then put them back."""
        seen.append(gc.get_threshold())
        original(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ReadingCollector, "stop", noted_stop)
        assert sweep(tmp_path / "out", corpus_file(tmp_path), tmp_path / "cache", "-n", "0") == 0
    assert READING_THRESHOLDS in seen
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
