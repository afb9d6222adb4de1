"""The Kimi K3 reader (route kimi_k3, XTML `<|open|>call tool="x"<|sep|>` sections with typed arguments)
against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

THINK = "<|close|>think<|sep|>"
RESPONSE = "<|open|>response<|sep|>{}<|close|>response<|sep|>"
CLOSE = "<|close|>message<|sep|><|end_of_msg|>"


def arg(key: str, kind: str, value: str) -> str:
    """One argument tag as the template writes it."""
    return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>'


def call(name: str, index: int, *args: str) -> str:
    """One call tag."""
    return f'<|open|>call tool="{name}" index="{index}"<|sep|>' + "".join(args) + "<|close|>call<|sep|>"


def tools(*calls: str) -> str:
    """A tools section."""
    return "<|open|>tools<|sep|>" + "".join(calls) + "<|close|>tools<|sep|>"


WEATHER = call("get_weather", 1, arg("city", "string", "Rio"), arg("days", "number", "4"))
EVENT = call("create_event", 1,
             arg("event", "object", '{"title": "Lunch", "place": {"city": "Oslo", "room": 3}}'),
             arg("attendees", "array", '["a", "b"]'))
EXTRA = (
    "The user wants the weather." + THINK + RESPONSE.format("") + tools(WEATHER) + CLOSE,
    "Two calls." + THINK + RESPONSE.format("Checking.") + tools(WEATHER, call("get_time", 2)) + CLOSE,
    THINK + tools(EVENT) + CLOSE,
    THINK + tools(WEATHER.replace(">4<", ">'4'<")) + CLOSE,
    "Skipped the closer <|open|>response<|sep|>It is sunny.",
    "Thinking" + THINK + RESPONSE.format("Sunny, 25°C — 東京 too.") + CLOSE,
    "Cut" + THINK + RESPONSE.format("Text") + tools(WEATHER),
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "Kimi-K3.jinja", EXTRA, "kimi_k3", stream_every=12)
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 80
