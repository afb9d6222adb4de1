"""Streams answered as deltas: merged as an OpenAI client merges them into the snapshots they stand for, and
refused where they say something else than the snapshots beside them."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import jsonschema
import pytest

from chatparity.model import Message, ParserCrashed, Rejection, ToolCall
from harness import sweep_command
from harness.stream_deltas import MergedDeltas, agreeing

TESTS = Path(__file__).resolve().parent
QWEN3 = "Qwen-Qwen3-0.6B.jinja"
EXPECTATIONS = TESTS.parent / "reply" / "expectations"
SCHEMA = json.loads((TESTS.parent / "harness" / "protocol.schema.json").read_text(encoding="utf-8"))


def test_deltas_merge_into_snapshots_a_refused_chunk_keeping_what_was_shown() -> None:
    deltas = [{"reasoning_content": "Hm"}, {"rejected": "no"},
              {"tool_calls": [{"index": 0, "id": "c1", "name": "get_time", "arguments": "{"}]},
              {"content": "", "tool_calls": [{"index": 0, "arguments": "}"}]}]
    assert tuple(MergedDeltas(deltas)) == (
        Message(reasoning_content="Hm"), Rejection("no"),
        Message(reasoning_content="Hm", tool_calls=(ToolCall("get_time", "{", "c1"),)),
        Message(reasoning_content="Hm", tool_calls=(ToolCall("get_time", "{}", "c1"),)),
    )


@pytest.mark.parametrize(("delta", "problem"), [
    ({"content": 5}, "content is not a string"),
    ({"tool_calls": [{"index": 1, "name": "x"}]}, "tool call index 1 where 0 calls were shown"),
    ("text", "expected an object"),
])
def test_a_malformed_delta_is_named(delta: object, problem: str) -> None:
    with pytest.raises(ParserCrashed, match=f"malformed delta 0: .*{problem}"):
        MergedDeltas([delta])


def test_deltas_that_say_otherwise_than_the_snapshots_are_refused() -> None:
    with pytest.raises(ParserCrashed, match="delta 1 merged gives"):
        agreeing((Message(content="a"), Message(content="ab")), (Message(content="a"), Message(content="abc")))


def labels(out: Path) -> dict[tuple[str, str], str]:
    """Each row's outcome and label, by case and chunking."""
    connection = sqlite3.connect(out / "rows.sqlite")
    try:
        return {(case, chunking): f"{outcome} {explained} {error if outcome == 'parser_crashed' else ''}"
                for case, chunking, outcome, explained, error in connection.execute(
                    "SELECT case_id, chunking, outcome, explained, error FROM rows")}
    finally:
        connection.close()


def sweep(tmp_path: Path, name: str, parser: str) -> dict[tuple[str, str], str]:
    """A quick sweep of Qwen3's think/parallel sessions through a parser, with the project parser's
    expectations; its rows' labels."""
    out = tmp_path / name
    sweep_command.main(["--parser", parser, "--templates", QWEN3, "--mode", "think/parallel", "-n", "0",
                        "--expectations", str(EXPECTATIONS), "--out", str(out)], prog="chatparity sweep")
    return labels(out)


def test_a_program_answering_deltas_reads_as_the_same_parser_answering_snapshots(tmp_path: Path) -> None:
    program = f"cmd:{sys.executable} {TESTS / 'sweep_delta_parser.py'}"
    record = tmp_path / "transcript.jsonl"
    recorded = f"cmd:{sys.executable} {TESTS / 'protocol_recorder.py'} {record} {sys.executable} " \
               f"{TESTS / 'sweep_delta_parser.py'} --deltas"
    direct = sweep(tmp_path, "direct", "reply")
    assert sweep(tmp_path, "deltas", recorded) == direct
    streams = [json.loads(line)["answer"] for line in record.read_text(encoding="utf-8").splitlines()
               if json.loads(line)["request"]["op"] == "stream"]
    answer_schema = {"$ref": "#/$defs/answer_to_stream", "$defs": SCHEMA["$defs"]}
    assert streams and all("deltas" in answer and "snapshots" not in answer for answer in streams)
    assert all(not list(jsonschema.Draft202012Validator(answer_schema).iter_errors(answer)) for answer in streams)
    assert sweep(tmp_path, "both", f"{program} --snapshots") == direct
    off = sweep(tmp_path, "off", f"{program} --snapshots-off")
    crashed = [label for key, label in off.items() if label != direct[key]]
    assert crashed and all(label.startswith("parser_crashed") and "merged gives" in label for label in crashed)
