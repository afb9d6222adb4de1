"""Drills: tool schemas that nest too deep or loop cost one line naming the corpus line and field, or only
their own check (not judged, with the reason); a sweep that yields no row never reads as a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatparity import cli
from corpora.corpus_file import MAX_NESTING
from tests.drill_support import QWEN3, corpus_file, rows

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"x": {"y": 1}}}\n</tool_call>'
LOOP = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}


def nested(levels: int) -> str:
    """An object schema `levels` objects deep, as JSON text (deeper than Python's own JSON writer goes)."""
    return '{"type": "object", "properties": {"x": ' * levels + '{"type": "string"}' + "}}" * levels


def tool_line(tool: str) -> str:
    """A corpus line offering one tool (JSON text) and calling it."""
    line = json.dumps({"id": "drill-tool", "template": QWEN3, "thinking": True, "tools": "auto", "kwargs": {},
                       "tool_defs": ["TOOL"], "reply": CALL, "partial": False})
    return line.replace('"TOOL"', tool)


def weather(parameters: str) -> str:
    """The get_weather tool with these parameters (JSON text), as JSON text."""
    return ('{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": '
            + parameters + "}}")


def sweep(out: Path, corpus: Path, cache: Path) -> int:
    """`chatparity sweep` of a corpus file, whole replies only, in this process."""
    return cli.main(["sweep", "--corpus", str(corpus), "--templates", QWEN3, "--chunking", "whole", "--out",
                     str(out), "--oracle-cache", str(cache), "-n", "0"])


@pytest.mark.parametrize("levels", [10_000, 480, 200])
def test_a_schema_nested_too_deep_is_one_line_naming_the_corpus_line_and_field(
    tmp_path: Path, levels: int, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "deep.jsonl"
    corpus.write_text(tool_line(weather(nested(levels))) + "\n", encoding="utf-8")
    assert sweep(tmp_path / "run", corpus, tmp_path / "cache") == 2
    assert capsys.readouterr().err.splitlines() == [
        (f"chatparity sweep: {corpus}:1: field 'tool_defs': nests {2 * levels + 4} levels deep; a corpus line's "
         f"values may nest {MAX_NESTING}")]
    assert not (tmp_path / "run").exists()


def test_a_looping_schema_leaves_its_check_unjudged_with_the_reason(tmp_path: Path) -> None:
    corpus = corpus_file(tmp_path, tool_line(weather(json.dumps(LOOP))))
    assert sweep(tmp_path / "run", corpus, tmp_path / "cache") == 0
    called = next(row for row in rows(tmp_path / "run") if row["reply"] == CALL)
    assert called["outcome"] == "match" and called["arguments_schema"] is None
    assert called["structure_detail"] == ("arguments_schema not judged: the schema of tool 'get_weather' loops "
                                          "($ref) or nests too deep to check")


def test_a_sweep_that_yields_no_row_is_no_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "unrenderable.jsonl"
    corpus.write_text(tool_line('{"$ref": "#"}') + "\n", encoding="utf-8")
    assert sweep(tmp_path / "run", corpus, tmp_path / "cache") == 2
    captured = capsys.readouterr()
    assert "PASS" not in captured.out and "1 no rows" in captured.out
    line = captured.err.strip().splitlines()
    assert len(line) == 1 and line[0].startswith("chatparity sweep: no session yields a row (1 sessions; first ")
    assert "oracle_error: oracle 'render' failed" in line[0] and not (tmp_path / "run").exists()
