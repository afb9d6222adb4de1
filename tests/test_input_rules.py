"""The input rule: no string a sweep sends a parser holds a lone surrogate; a source that gives one costs the
session, and the parser is sent nothing of it."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from surrogate_corpus import BROKEN, CLEAN
from sweep_corpus import QWEN3, planned

from chatparity.cli import main as cli
from chatparity.model import ToolMode
from harness.input_rules import broken_input, lone_surrogate_in

ROOT = Path(__file__).resolve().parent.parent
RECORDER = ROOT / "tests" / "protocol_recorder.py"
NODE_PARSER = ROOT / "examples" / "hermes_parser" / "parser.mjs"


def test_a_lone_surrogate_is_found_by_its_path_and_offset() -> None:
    assert lone_surrogate_in({"messages": [{"content": "ok"}, {"content": "a\udc00"}]}, "s") == (
        "s.messages[1].content at code point 1"
    )
    assert lone_surrogate_in({"k\ud800": 1}, "s") == "s key 'k\\ud800' at code point 1"
    assert lone_surrogate_in({"text": "東京 😀 \U0010ffff"}, "s") is None


def test_a_session_or_a_reply_with_a_lone_surrogate_breaks_the_rule() -> None:
    session = planned(QWEN3, True, ToolMode.AUTO).session
    assert broken_input(session, [CLEAN]) is None
    assert broken_input(session, [CLEAN, BROKEN]) == (
        "reply (origin hand, shape surrogate) at code point 4: "
        "a lone surrogate (\\ud800-\\udfff) is not text; no parser is sent it"
    )
    asked = replace(session, messages=({"role": "user", "content": "Rio\ud83d?"},))
    assert (broken_input(asked, []) or "").startswith("session.messages[0].content at code point 3: ")


def test_a_sweep_sends_no_parser_a_session_that_breaks_the_rule(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "transcript.jsonl"
    parser = f"cmd:{sys.executable} {RECORDER} {record} node {NODE_PARSER}"
    flags = ["--source", str(ROOT / "tests" / "surrogate_corpus.py"), "--chunking", "whole,char", "-n", "0"]
    assert cli(["sweep", "--parser", parser, *flags, "--out", str(tmp_path / "run")]) == 1
    out = capfd.readouterr().out
    assert "1 sweep items lost (first: " in out
    assert "input rule: reply (origin hand, shape surrogate) at code point 4" in out
    requests = [json.loads(line)["request"] for line in record.read_text(encoding="utf-8").splitlines()]
    opened = [request["session"]["parallel_tool_calls"] for request in requests if request["op"] == "open"]
    assert opened == [False]
