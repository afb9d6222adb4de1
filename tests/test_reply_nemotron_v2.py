"""The Nemotron Nano v2 reader (autoparser with llama.cpp's patch, `<TOOLCALL>[{"name": …, "arguments": {…}}]
</TOOLCALL>`) against llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

WEATHER = '{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}'
EXTRA = (
    f"The user wants weather.\n</think>\n\n<TOOLCALL>[{WEATHER}]</TOOLCALL>",
    f'</think><TOOLCALL>[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]</TOOLCALL>',
    f"</think><TOOLCALL>[{WEATHER}]</TOOLCALL>\n<TOOLCALL>[{WEATHER}]</TOOLCALL>",
    "Thought.\n</think>\n\nIt is sunny.",
    f"<TOOLCALL>[{WEATHER}]</TOOLCALL>",
    f"</think>Sure. <TOOLCALL>[{WEATHER}]</TOOLCALL> done",
    "Unfinished thought",
)
WHOLE, STREAMED, WITH_CALLS = 800, 50, 200


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "NVIDIA-Nemotron-Nano-v2.jinja", EXTRA, "nemotron_v2", stream_every=8)
    assert tally.differences == []
    assert tally.whole > WHOLE and tally.streamed > STREAMED and tally.with_calls > WITH_CALLS
