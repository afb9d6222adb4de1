"""The MiniMax M3 reader (route minimax_m3, `]<]minimax[>[<invoke name="x">` with XML arguments) against
llama.cpp, whole and streamed."""

from __future__ import annotations

import pytest

from tests.reply_oracle_compare import compare

pytestmark = pytest.mark.oracle

NS = "]<]minimax[>["
WEATHER = f'{NS}<invoke name="get_weather">{NS}<city>Rio{NS}</city>{NS}<days>4{NS}</days>{NS}</invoke>'
EVENT = (f'{NS}<invoke name="create_event">{NS}<event>{NS}<title>Lunch{NS}</title>{NS}<place>{NS}<city>Oslo'
         f'{NS}</city>{NS}<room>3{NS}</room>{NS}</place>{NS}</event>{NS}<attendees>{NS}<item>a{NS}</item>'
         f'{NS}<item>b{NS}</item>{NS}</attendees>{NS}</invoke>')
TIME = f'{NS}<invoke name="get_time">{NS}</invoke>'


def calls(*invokes: str) -> str:
    """A call block holding the invokes, as the template writes it."""
    return f"{NS}<tool_call>\n" + "\n".join(invokes) + f"\n{NS}</tool_call>"


EXTRA = (
    "</mm:think>" + calls(EVENT),
    "<mm:think>\nThe user wants lunch booked.\n</mm:think>" + calls(EVENT, WEATHER),
    "</mm:think>Booking it." + calls(WEATHER, TIME),
    "</mm:think>" + calls(EVENT.replace(f"{NS}<title>Lunch{NS}</title>", "")),
    "</mm:think>" + calls(EVENT.replace(f"{NS}<item>b{NS}</item>", "")),
    "</mm:think>" + calls(WEATHER.replace("4", "four")),
    "<mm:think>   </mm:think>It is sunny.",
    "</mm:think>" + calls(WEATHER) + " and more",
)


def test_reads_as_llama_cpp(oracle) -> None:
    """Corpus and hand-written replies read as llama.cpp reads them, whole, cut off and per character."""
    tally = compare(oracle, "MiniMax-M3.jinja", EXTRA, "minimax_m3", stream_every=8)
    assert tally.differences == []
    assert tally.whole > 300 and tally.streamed > 50 and tally.with_calls > 80
