"""Corpus files: lines read into replies, bad lines named by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatparity.model import ToolMode
from corpora.corpus_file import CorpusFileError, read_corpus

TEMPLATES = {"Qwen-Qwen3-0.6B.jinja", "GLM-4.6.jinja"}
GOOD = {
    "id": "qwen-call", "template": "Qwen-Qwen3-0.6B.jinja", "thinking": True, "tools": "auto", "kwargs": {},
    "reply": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio"}}\n</tool_call>', "partial": False,
    "truth": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rio"}}]}, "note": "hand-written",
}


def write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "hand.jsonl"
    path.write_text("\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n",
                    encoding="utf-8")
    return path


def test_good_lines_become_replies(tmp_path: Path) -> None:
    other = dict(GOOD, id="glm", template="GLM-4.6.jinja", tools="none", truth=None, reply="Hi", partial=True,
                 messages=[{"role": "user", "content": "Hi"}], kwargs={"x": 1})
    lines = read_corpus(write(tmp_path, GOOD, "", other), TEMPLATES)
    assert [(line.id, line.line) for line in lines] == [("qwen-call", 1), ("glm", 3)]
    first, second = lines
    reply = first.as_reply()
    assert reply.origin == "file:hand.jsonl" and reply.shape == "qwen-call" and not reply.partial
    assert reply.truth is not None and json.loads(reply.truth.tool_calls[0].arguments) == {"city": "Rio"}
    assert first.tools is ToolMode.AUTO and first.messages is None and first.tool_defs is None
    assert second.as_reply().partial and second.truth is None and second.kwargs == (("x", 1),)
    assert first.session_key != second.session_key
    assert first.reasoning_format == "deepseek"
    plain = read_corpus(write(tmp_path, dict(GOOD, reasoning_format="none")), TEMPLATES)[0]
    assert plain.reasoning_format == "none" and plain.session_key != first.session_key


@pytest.mark.parametrize(("change", "line_field", "problem"), [
    ({"tools": "sometimes"}, "tools", "expected one of none, auto, required, parallel, choice_none"),
    ({"thinking": "yes"}, "thinking", "expected true or false"),
    ({"partial": 1}, "partial", "expected true or false"),
    ({"reply": 3}, "reply", "expected a string"),
    ({"template": "Nope.jinja"}, "template", "no upstream template named 'Nope.jinja'"),
    ({"kwargs": []}, "kwargs", "expected an object"),
    ({"messages": {"role": "user"}}, "messages", "expected a list of messages"),
    ({"messages": ["hi"]}, "messages[0]", "expected one of messages as an object"),
    ({"truth": {"tool_calls": [{"name": "x", "arguments": "{bad"}]}}, "truth.tool_calls[0].arguments",
     "not JSON text"),
    ({"truth": {"content": 5}}, "truth.content", "expected a string"),
    ({"truth": {"reasoning": "x"}}, "truth.reasoning", "unknown field"),
    ({"colour": "red"}, "colour", "unknown field"),
    ({"id": ""}, "id", "expected a non-empty string"),
    ({"reasoning_format": "deepseek-r1"}, "reasoning_format", "expected one of deepseek, none, deepseek-legacy, auto"),
])
def test_a_bad_line_names_file_line_and_field(tmp_path: Path, change: dict[str, object], line_field: str,
                                              problem: str) -> None:
    path = write(tmp_path, dict(GOOD, id="first"), dict(GOOD, **change))
    with pytest.raises(CorpusFileError) as caught:
        read_corpus(path, TEMPLATES)
    error = caught.value
    assert (error.path, error.line, error.field_name) == (path, 2, line_field)
    assert problem in str(error) and str(error).startswith(f"{path}:2: field {line_field!r}")


def test_missing_field_duplicate_id_and_bad_json(tmp_path: Path) -> None:
    missing = {k: v for k, v in GOOD.items() if k != "kwargs"}
    with pytest.raises(CorpusFileError, match=r"hand.jsonl:1: field 'kwargs': missing"):
        read_corpus(write(tmp_path, missing), TEMPLATES)
    with pytest.raises(CorpusFileError, match=r"hand.jsonl:2: field 'id': 'qwen-call' is already used on line 1"):
        read_corpus(write(tmp_path, GOOD, GOOD), TEMPLATES)
    with pytest.raises(CorpusFileError, match=r"hand.jsonl:1: field '\(line\)': not JSON"):
        read_corpus(write(tmp_path, "{nope"), TEMPLATES)
    with pytest.raises(CorpusFileError, match=r"hand.jsonl:1: field '\(line\)': expected a JSON object"):
        read_corpus(write(tmp_path, "[1]"), TEMPLATES)
