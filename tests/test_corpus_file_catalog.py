"""Corpus files through the catalog and the `chatparity corpus` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corpora import catalog, commands
from corpora.corpus_file import FilePlannedSession

LINES = [
    {"id": "qwen-think", "template": "Qwen-Qwen3-0.6B.jinja", "thinking": True, "tools": "auto", "kwargs": {},
     "reply": "<think>Sunny.</think>It is sunny.", "partial": False,
     "truth": {"content": "It is sunny.", "reasoning_content": "Sunny."}},
    {"id": "qwen-cut", "template": "Qwen-Qwen3-0.6B.jinja", "thinking": True, "tools": "auto", "kwargs": {},
     "reply": "<think>Sun", "partial": True, "note": "cut in the thought"},
    {"id": "glm-own-chat", "template": "GLM-4.6.jinja", "thinking": False, "tools": "none", "kwargs": {},
     "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
     "tool_defs": [], "reply": "Hello.", "partial": False},
]


def corpus(tmp_path: Path, rows: list[Any]) -> Path:
    path = tmp_path / "hand.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


def test_file_lines_become_sessions_and_replies(tmp_path: Path) -> None:
    planned = catalog.plan("quick", templates="GLM-4.6.jinja", mode="nothink/none", corpus_file=corpus(tmp_path, LINES))
    assert len(planned) == 1 and isinstance(planned[0], FilePlannedSession)
    glm = planned[0]
    assert glm.session.conversation == "file:hand.jsonl" and glm.session.messages[0]["content"] == "Be brief."
    assert glm.session.prompt is not None and "Be brief." in glm.session.prompt and not glm.jinja_error
    assert [(r.origin, r.shape, r.text) for r in catalog.replies(glm, "quick")] == [
        ("file:hand.jsonl", "glm-own-chat", "Hello.")]


def test_lines_of_one_session_share_it_with_truth_and_partial_kept(tmp_path: Path) -> None:
    planned = catalog.plan("quick", templates="Qwen-Qwen3-0.6B.jinja", mode="think/auto",
                           corpus_file=corpus(tmp_path, LINES))
    qwen = [p for p in planned if isinstance(p, FilePlannedSession)]
    assert len(qwen) == 1
    replies = catalog.replies(qwen[0], "full")
    assert [(r.shape, r.partial) for r in replies] == [("qwen-think", False), ("qwen-cut", True)]
    assert replies[0].truth is not None and replies[0].truth.reasoning_content == "Sunny."
    assert replies[1].note == "cut in the thought"
    assert qwen[0].session.tools and qwen[0].session.id not in {p.session.id for p in planned if p is not qwen[0]}


def test_a_bad_file_line_stops_the_command_naming_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus(tmp_path, [LINES[0], dict(LINES[1], tools="always")])
    assert commands.main(["--template", "Qwen-Qwen3-0.6B.jinja", "--corpus-file", str(path)]) == 2
    assert f"{path}:2: field 'tools'" in capsys.readouterr().err


def test_the_command_shows_replies_with_truth_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert commands.main(["--template", "Qwen-Qwen3-0.6B.jinja", "--mode", "think/auto"]) == 0
    shown = capsys.readouterr().out
    assert "== Qwen-Qwen3-0.6B.jinja  think/auto  single" in shown
    assert "[thinking] leading_thought" in shown and '"reasoning_content": "The user asks about the weather' in shown
    assert "[partial] roundtrip:one_call@in_call_name partial" in shown
    assert commands.main(["--template", "Qwen-Qwen3-0.6B.jinja", "--mode", "think/auto", "--counts"]) == 0
    counted = capsys.readouterr().out.splitlines()
    totals = {line.rsplit(None, 1)[0]: int(line.rsplit(None, 1)[1]) for line in counted}
    assert totals["templates"] == 1 and totals["sessions"] == 4
    assert totals["replies: total"] == sum(v for k, v in totals.items() if k.startswith("replies: ") and k != "replies: total")
    assert {"replies: roundtrip", "replies: thinking", "replies: toolcall", "replies: partial", "replies: fuzz"} <= set(totals)
