"""SGLang's adapter, driven with a small stand-in of SGLang's parsers (nothing is installed or downloaded):
the order serving_chat chains them in, what a stream shows, the flush at its end, and the sessions it
declines."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from peers.sglang.adapter import PARSERS_FILE, Choice, SglangPeer, read_choices, thinking_from_request
from peers.wire import Unsupported, serve

EXPECTATIONS = Path(__file__).resolve().parent.parent / "peers" / "sglang" / "expectations"


class Calls:
    """A tool-call parser reading `<call>NAME`: the name when the marker arrives, its arguments only at the
    end (as a detector that parsed them but did not stream them)."""

    ToolCallParserEnum: ClassVar[dict[str, Any]] = {
        "calls": SimpleNamespace(parses_without_tools=lambda: False),
        "json_only": SimpleNamespace(parses_without_tools=lambda: False),
    }

    def __init__(self, tools: list[Any], name: str, tool_choice: str | None = None) -> None:
        self.name = name
        self.seen = ""
        self.detector = SimpleNamespace(prev_tool_call_arr=[], streamed_args_for_tool=[])

    def owns_tool_format(self) -> bool:
        return self.name != "json_only"

    def has_tool_call(self, text: str) -> bool:
        return "<call>" in text

    def parse_non_stream(self, text: str) -> tuple[str, list[Any]]:
        before, _, name = text.partition("<call>")
        return before, [SimpleNamespace(tool_index=0, name=name, parameters='{"x": 1}')]

    def parse_stream_chunk(self, chunk: str) -> tuple[str, list[Any]]:
        start = len(self.seen)
        self.seen += chunk
        marker = self.seen.find("<call>")
        if marker < 0:
            return chunk, []
        if self.detector.prev_tool_call_arr:
            return "", []
        self.detector.prev_tool_call_arr.append({"arguments": {"x": 1}})
        self.detector.streamed_args_for_tool.append("")
        return self.seen[start:marker], [SimpleNamespace(tool_index=0, name="f", parameters="")]

    def parse_stream_end(self) -> tuple[str, list[Any]]:
        return "", []


class Reasoning:
    """A reasoning parser reading `<r>…</r>` at the start; it records how the adapter built it."""

    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(
        self,
        model_type: str,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        request: Any = None,
        tool_call_parser_active: bool = False,
    ) -> None:
        Reasoning.made.append({"stream_reasoning": stream_reasoning, "force_reasoning": force_reasoning})
        self.detector = SimpleNamespace(reasoning_default="enable_thinking")
        self.seen = ""
        self.sent = 0

    def parse_non_stream(self, text: str) -> tuple[str, str]:
        thought, _, rest = text.removeprefix("<r>").partition("</r>")
        return (thought, rest) if text.startswith("<r>") else ("", text)

    def parse_stream_chunk(self, chunk: str) -> tuple[str, str]:
        self.seen += chunk
        if "</r>" not in self.seen:
            return "", ""
        thought, rest = self.parse_non_stream(self.seen)
        new = rest[self.sent :]
        self.sent = len(rest)
        return (thought if self.sent == len(new) else ""), new

    def parse_stream_end(self) -> tuple[str, str]:
        return "", ""


API = SimpleNamespace(
    FunctionCallParser=Calls,
    ReasoningParser=Reasoning,
    Tool=SimpleNamespace(model_validate=lambda tool: tool),
    detect_reasoning_pattern=lambda source: (False, None),
    request=lambda session: SimpleNamespace(
        chat_template_kwargs={"enable_thinking": session["enable_thinking"]},
        reasoning_effort=None,
        stream_reasoning=True,
    ),
)
CHOICES = {
    "both.jinja": Choice("both.jinja", "calls", "thinking", "test"),
    "json.jinja": Choice("json.jinja", "json_only", "", "test"),
    "kimi.jinja": Choice("kimi.jinja", "kimi_k2", "", "test"),
    "none.jinja": Choice("none.jinja", "", "", "no parser for it"),
}


def session(template: str = "both.jinja", tool_choice: str = "auto", **fields: Any) -> dict[str, Any]:
    """A session offering one tool."""
    return {
        "template": template,
        "template_source": "",
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "tool_choice": tool_choice,
        "enable_thinking": True,
        "chat_template_kwargs": {},
        "messages": [],
        **fields,
    }


def test_a_whole_reply_is_read_for_reasoning_first_then_for_calls() -> None:
    """The reasoning parser splits the thought off; the call parser reads only the text after it."""
    reader = SglangPeer(API, CHOICES).open(session())
    found = reader.parse("<r>hm</r>hi<call>f", partial=False)
    assert found == {
        "reasoning_content": "hm",
        "content": "hi",
        "tool_calls": [{"name": "f", "arguments": '{"x": 1}', "id": ""}],
    }
    assert Reasoning.made[-1] == {"stream_reasoning": False, "force_reasoning": True}


def test_a_stream_shows_each_delta_and_the_finish_sends_unstreamed_arguments() -> None:
    """Each chunk's normal text goes through the call parser; at the finish the arguments the detector parsed
    but did not stream are sent, as `_check_for_unstreamed_tool_args` does."""
    reader = SglangPeer(API, CHOICES).open(session())
    snapshots, final = reader.stream(["<r>hm", "</r>hi", "<call>f"], finish=True)
    assert [snapshot["content"] for snapshot in snapshots] == ["", "hi", "hi"]
    assert snapshots[1]["reasoning_content"] == "hm"
    assert snapshots[2]["tool_calls"] == [{"name": "f", "arguments": "", "id": ""}]
    assert final is not None and final["tool_calls"] == [{"name": "f", "arguments": '{"x": 1}', "id": ""}]


def test_a_stream_that_does_not_finish_has_no_final_reading() -> None:
    """A cut reply's stream ends on its last snapshot, unflushed."""
    snapshots, final = SglangPeer(API, CHOICES).open(session()).stream(["<r>a</r>b<call>f"], finish=False)
    assert final is None and snapshots[-1]["tool_calls"][0]["arguments"] == ""


def test_tool_choice_none_leaves_calls_as_text() -> None:
    """With tools offered but tool_choice none, the call parser is not run (`_tool_call_parsing_active`)."""
    reader = SglangPeer(API, CHOICES).open(session(tool_choice="none"))
    assert reader.parse("hi<call>f", partial=False)["content"] == "hi<call>f"


def test_sessions_without_a_parser_are_declined_with_the_reason() -> None:
    """A template with no parser chosen, or none listed, is unsupported, never a failure."""
    peer = SglangPeer(API, CHOICES)
    with pytest.raises(Unsupported, match="no parser for it"):
        peer.open(session("none.jinja"))
    with pytest.raises(Unsupported, match="no SGLang parser is chosen"):
        peer.open(session("other.jinja"))


def test_required_is_declined_where_sglang_expects_its_own_json_array() -> None:
    """tool_choice=required with a parser that does not own the format makes SGLang read a JSON array."""
    with pytest.raises(Unsupported, match="JSON array"):
        SglangPeer(API, CHOICES).open(session("json.jinja", tool_choice="required"))
    assert SglangPeer(API, CHOICES).open(session("both.jinja", tool_choice="required")).required


def test_kimi_calls_carry_the_ids_the_server_gives_them() -> None:
    """Kimi K2's ids count the conversation's earlier calls."""
    history = [{"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}]
    reader = SglangPeer(API, CHOICES).open(session("kimi.jinja", messages=history))
    assert reader.parse("<call>f", partial=False)["tool_calls"][0]["id"] == "functions.f:2"


def test_the_thinking_setting_follows_the_request() -> None:
    """The template's reasoning toggle, else the detector's default mode, decides force_reasoning."""

    def request(**kwargs: Any) -> Any:
        return SimpleNamespace(chat_template_kwargs=kwargs, reasoning_effort=None)

    off_by_default = SimpleNamespace(special_case=None, toggle_param="thinking", default_enabled=False)
    assert thinking_from_request("qwen3", None, "enable_thinking", request()) is True
    assert thinking_from_request("qwen3", None, "enable_thinking", request(enable_thinking=False)) is False
    assert thinking_from_request("deepseek-v3", off_by_default, None, request()) is False
    assert thinking_from_request("deepseek-v3", off_by_default, None, request(thinking=True)) is True
    assert thinking_from_request("minimax-m3", None, None, request(thinking_mode="enabled")) is True


def test_the_protocol_loop_answers_each_request_and_reports_a_failure_as_that_call_s_error() -> None:
    """open, parse and stream go to the reader; an exception is an error answer and the loop goes on."""
    requests = [
        {"id": 1, "op": "info"},
        {"id": 2, "op": "open", "session": session()},
        {"id": 3, "op": "parse", "reader": 0, "text": "<r>a</r>b", "partial": False},
        {"id": 4, "op": "stream", "reader": 9, "chunks": ["x"], "finish": True},
        {"id": 5, "op": "open", "session": session("none.jinja")},
    ]
    out = io.StringIO()
    lines = io.StringIO("".join(json.dumps(request) + "\n" for request in requests))
    serve(SglangPeer(API, CHOICES).open, {"name": "sglang"}, lines, out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4, 5]
    assert answers[0]["name"] == "sglang" and answers[1]["reader"] == 0
    assert answers[2]["reading"]["content"] == "b"
    assert answers[3]["error"].startswith("KeyError")
    assert "unsupported" in answers[4]


def test_the_parsers_file_names_a_parser_or_a_reason_for_every_upstream_template() -> None:
    """Every indexed template has an entry: parsers SGLang registers, or a reason to decline it."""
    from templates.index import load_index

    choices = read_choices(EXPECTATIONS / PARSERS_FILE)
    assert set(choices) == set(load_index())
    assert all(choice.reason for choice in choices.values())
    assert choices["Qwen-Qwen3-0.6B.jinja"] == Choice(
        "Qwen-Qwen3-0.6B.jinja", "qwen25", "qwen3", choices["Qwen-Qwen3-0.6B.jinja"].reason
    )
    assert (choices["GLM-4.7-Flash.jinja"].tool, choices["GLM-4.7-Flash.jinja"].reasoning) == (
        "glm47",
        "glm45",
    )


def test_sglang_s_whitespace_policy_explains_edge_whitespace_only() -> None:
    """Its policy accepts a thought kept as written and stripped text around calls, never other text."""
    from chatparity.model import Message
    from harness.policies import policies_in
    from harness.policy_rules import Point

    policies = policies_in(EXPECTATIONS)
    point = Point("<think>\n\n</think>\n\nhi", False, ())
    assert policies.explain(Message("hi"), Message("\n\nhi", "\n\n"), point) == ("own-whitespace-rules",)
    assert policies.explain(Message("hi there"), Message("hi  there"), point) is None


def test_the_request_carries_the_thinking_switch_under_the_template_s_own_variables() -> None:
    """A mode whose template kwargs set enable_thinking renders with them, so the request says the same."""
    from peers.sglang.runtime import request_fields

    fields = request_fields(
        session(chat_template_kwargs={"enable_thinking": False, "reasoning_effort": "low"})
    )
    assert fields["chat_template_kwargs"] == {"enable_thinking": False, "reasoning_effort": "low"}
    assert fields["reasoning_effort"] == "low" and fields["tool_choice"] == "auto"
    assert request_fields(session())["chat_template_kwargs"] == {"enable_thinking": True}


def test_sglang_s_argument_pacing_policy_explains_prefixes_mid_stream_only() -> None:
    """Arguments that are a prefix of llama.cpp's (or extend them) at a snapshot are its pacing; other text,
    or a finished reading, is not."""
    from chatparity.model import Message, ToolCall
    from harness.policies import policies_in
    from harness.policy_rules import Point

    policies = policies_in(EXPECTATIONS)

    def call(arguments: str) -> Message:
        return Message(tool_calls=(ToolCall("f", arguments),))

    cut, finished = Point("x", True, ()), Point("x", False, ())
    assert policies.explain(call('{"a":'), call('{"a": '), cut) == ("streams-arguments-at-its-own-pace",)
    assert policies.explain(call("{"), call(""), cut) == ("streams-arguments-at-its-own-pace",)
    assert policies.explain(call('{"a": 1'), call('{"b": 1'), cut) is None
    assert policies.explain(call('{"a":'), call('{"a": '), finished) is None
