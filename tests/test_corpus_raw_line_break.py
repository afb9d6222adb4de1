"""The quick corpus holds a JSON call whose string argument carries a raw line break (CR LF and a tab, as models
write multi-line values unescaped), streamed in the quick profile."""

from __future__ import annotations

import json

from corpora.catalog import plan, replies
from harness.profiles import rules_of

QWEN3 = "Qwen-Qwen3-0.6B.jinja"
SHAPE = "raw_line_break_in_json_string"


def test_a_json_string_argument_holds_a_raw_line_break_and_streams() -> None:
    (session,) = [s for s in plan("quick", QWEN3, None, "think/auto") if s.session.conversation == "single"]
    (reply,) = [reply for reply in replies(session, "quick") if reply.shape == SHAPE]
    call = reply.text[reply.text.index("{") : reply.text.rindex("}") + 1]
    value = json.loads(call, strict=False)["arguments"]["city"]
    assert "\r\n\t" in value and "\r\n\t" in reply.text
    assert rules_of("quick").applies("char3", reply, "think/auto")


def test_a_template_writing_no_json_strings_skips_the_shape() -> None:
    (session,) = [s for s in plan("quick", "MiniMax-M3.jinja", None, "think/auto") if s.session.conversation == "single"]
    assert SHAPE not in {reply.shape for reply in replies(session, "quick")}
