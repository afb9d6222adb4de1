"""reasoning_format as a mode: with `none` llama.cpp leaves a thought in the content, tags and all, so neither the
truth's text nor the thinking tags count against it there, while a refusal still does."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from reports.commands.sweep import main as sweep_main

QWEN3 = "Qwen-Qwen3-0.6B.jinja"
DEEPSEEK = "deepseek-ai-DeepSeek-V3.2.jinja"
THOUGHT = {"content": "Sunny.", "reasoning_content": "The user asks.", "tool_calls": []}


def line(line_id: str, template: str, reply: str, reasoning_format: str) -> dict[str, object]:
    """A corpus line with a thought and its truth, in one reasoning format."""
    return {"id": line_id, "template": template, "thinking": True, "tools": "auto", "kwargs": {}, "reply": reply,
            "partial": False, "truth": THOUGHT, "reasoning_format": reasoning_format}


def swept(tmp_path: Path, *lines: dict[str, object]) -> dict[str, dict[str, object]]:
    """The whole rows of a sweep of llama.cpp against itself over the lines, by shape."""
    corpus = tmp_path / "formats.jsonl"
    corpus.write_text("".join(json.dumps(each) + "\n" for each in lines), encoding="utf-8")
    out = tmp_path / "run"
    status = sweep_main(["--parser", "oracle", "--corpus", str(corpus), "--chunking", "whole", "--out",
                                 str(out), "-n", "0"], prog="chatparity sweep")
    assert status == 0
    connection = sqlite3.connect(out / "rows.sqlite")
    connection.row_factory = sqlite3.Row
    rows = {row["shape"]: dict(row) for row in connection.execute("SELECT * FROM rows")}
    connection.close()
    return rows


def whole_read_entries(tmp_path: Path) -> list[dict[str, object]]:
    """The whole-read entries of the sweep's llama.cpp defect report, robustness included."""
    entries = json.loads((tmp_path / "run" / "oracle_defects.json").read_text(encoding="utf-8"))["entries"]
    return [entry for entry in entries if entry["part"] == "whole"]


def test_with_reasoning_format_none_a_thought_in_the_content_is_no_defect(tmp_path: Path) -> None:
    reply = "<think>\nThe user asks.\n</think>\n\nSunny."
    rows = swept(tmp_path, line("none", QWEN3, reply, "none"), line("deepseek", QWEN3, reply, "deepseek"))
    kept = json.loads(rows["none"]["oracle_reading"])
    assert kept["content"].startswith("<think>") and kept["reasoning_content"] == ""
    assert rows["none"]["mode"] == "think/auto/reasoning_format=none" and rows["deepseek"]["mode"] == "think/auto"
    assert rows["none"]["oracle_vs_truth"] == "match" and rows["none"]["oracle_no_leakage"] == 1
    assert json.loads(rows["deepseek"]["oracle_reading"])["reasoning_content"] == "The user asks.\n"
    assert whole_read_entries(tmp_path) == []


def test_with_reasoning_format_none_a_refused_reply_still_counts(tmp_path: Path) -> None:
    reply = "</think>Sunny."
    rows = swept(tmp_path, line("none", DEEPSEEK, reply, "none"))
    assert "rejected" in json.loads(rows["none"]["oracle_reading"])
    assert rows["none"]["oracle_vs_truth"] == "rejects"
    assert [entry["kind"] for entry in whole_read_entries(tmp_path)] == ["rejects the reply"]
