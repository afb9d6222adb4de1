"""The three-turn loop against the real oracle, pinned on templates with known multi-turn behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from chatparity.model import Message, Mode, ParserCrashed, ParserUnderTest, Session, ToolMode
from corpora.planning import checked_source
from harness.multiturn import TurnRow, parser_verdict, run_loop
from harness.multiturn_checks import Break
from reports.commands.multiturn import main as multiturn_main
from templates.index import load_index


def loop(oracle: Any, template: str, thinking: bool, tools: ToolMode) -> list[TurnRow]:
    """The rows of one loop (no parser under test)."""
    entry = load_index()[template]
    return run_loop(entry, checked_source(entry, None), Mode(thinking, tools), oracle, None)


def under(rows: list[TurnRow], renderer: str) -> list[TurnRow]:
    """The rows of one renderer, in turn order."""
    return sorted((row for row in rows if row.renderer == renderer), key=lambda row: row.turn)


@pytest.mark.parametrize("renderer", ["llama.cpp", "jinja2"])
def test_seed_oss_is_append_safe_in_a_tool_loop(oracle: Any, renderer: str) -> None:
    """Seed-OSS keeps every thought and call as generated, with one <seed:eos> after each reply."""
    rows = under(loop(oracle, "ByteDance-Seed-OSS.jinja", True, ToolMode.AUTO), renderer)
    assert [(row.turn, row.append, row.boundary, row.breaks) for row in rows] == [
        (1, "ok", "ok", ""),
        (2, "ok", "ok", ""),
        (3, "ok", "ok", ""),
    ]
    assert all(row.parses == "match" for row in rows)


def test_qwen3_drops_the_thought_of_a_text_turn(oracle: Any) -> None:
    """Qwen3 writes a past answer without its thought: prompt 2 leaves prompt 1 + reply at the <think> tag."""
    rows = under(loop(oracle, "Qwen-Qwen3-0.6B.jinja", True, ToolMode.NONE), "llama.cpp")
    first = rows[0]
    assert (first.turn, first.append, first.breaks) == (1, "break", Break.THOUGHT_DROPPED.value)
    assert first.offset == 146
    assert "<think>\\nRio is tropical." in first.expected
    assert "Rio is usually warm." in first.actual
    assert [row.offset for row in rows] == [146, 242, 344]


def test_qwen3_keeps_thoughts_during_the_tool_loop_then_drops_them(oracle: Any) -> None:
    """Within the tool loop the thoughts stay; the question after the final answer drops them all."""
    rows = under(loop(oracle, "Qwen-Qwen3-0.6B.jinja", True, ToolMode.AUTO), "llama.cpp")
    assert [row.append for row in rows] == ["ok", "ok", "break"]
    assert (rows[2].breaks, rows[2].offset) == (Break.HISTORY_THOUGHT_DROPPED.value, 1837)


def test_apriel_15_reserialises_the_call_with_its_id(oracle: Any) -> None:
    """Apriel 1.5 writes a past call with its id inside the JSON, which the model never generates."""
    rows = under(loop(oracle, "unsloth-Apriel-1.5.jinja", False, ToolMode.AUTO), "llama.cpp")
    first = rows[0]
    assert (first.append, first.breaks, first.offset) == ("break", Break.CALL_RESERIALISED.value, 2208)
    assert '"id": "Xq7Tz2Lp9"' in first.actual
    assert first.parses == "match"


def test_the_command_writes_the_same_tables_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`chatparity multiturn` on one template and mode, without a parser, writes byte-identical files."""
    args = ["--templates", "Qwen-Qwen3-0.6B.jinja", "--mode", "think/none", "--parser", "none"]
    assert multiturn_main([*args, "--out", str(tmp_path / "one")], "chatparity multiturn") == 0
    assert multiturn_main([*args, "--out", str(tmp_path / "two")], "chatparity multiturn") == 0
    assert (
        "1 templates: 0 append-safe in every mode, 1 breaking only by known behaviours"
        in capsys.readouterr().out
    )
    for name in ("multiturn.md", "multiturn.json", "multiturn.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    data = json.loads((tmp_path / "one" / "multiturn.json").read_text(encoding="utf-8"))
    assert data["templates"][0]["what breaks"] == "thought dropped from history (known)"


def test_the_command_names_a_template_glob_that_matches_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert multiturn_main(["--templates", "no-such-*.jinja"], "chatparity multiturn") == 2
    assert "no template matches --templates 'no-such-*.jinja'" in capsys.readouterr().err


class ClosingParser:
    """A parser whose readers crash on 'crash' and note when they are closed."""

    def __init__(self) -> None:
        self.closed = 0

    def open(self, session: Any) -> ClosingParser:
        return self

    def parse(self, text: str, partial: bool) -> Message:
        if text == "crash":
            raise ParserCrashed("boom")
        return Message(text)

    def close(self) -> None:
        self.closed += 1


def test_each_reader_the_loop_opens_is_closed_after_its_read() -> None:
    parser = ClosingParser()
    under_test, session = cast(ParserUnderTest, parser), cast(Session, None)
    assert parser_verdict(under_test, session, "Hi", Message("Hi")) == "match"
    assert parser_verdict(under_test, session, "crash", Message("Hi")).startswith("parser_crashed")
    assert parser.closed == 2
