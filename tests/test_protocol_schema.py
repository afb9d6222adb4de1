"""The subprocess protocol's JSON schema against what the harness really sends, in the order it sends it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from corpora import catalog
from harness.command_parser import session_json

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "harness" / "protocol.schema.json").read_text(encoding="utf-8"))
SHIPPED = ROOT / "harness" / "protocol_transcript.jsonl"
NODE_PARSER = ROOT / "examples" / "hermes_parser" / "parser.mjs"
RECORDER = ROOT / "tests" / "protocol_recorder.py"
TEMPLATE = "Qwen-Qwen3-0.6B.jinja"


def validator(name: str | None = None) -> jsonschema.Draft202012Validator:
    """A validator of the whole schema (a request line), or of one of its $defs."""
    schema = SCHEMA if name is None else {"$ref": f"#/$defs/{name}", "$defs": SCHEMA["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def problems(name: str | None, value: Any) -> list[str]:
    """What the schema (or one of its $defs) finds wrong with `value`."""
    return [error.message for error in validator(name).iter_errors(value)]


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Every exchange of a sweep of one template in every mode through the Node example, in order."""
    where = tmp_path_factory.mktemp("transcript")
    record = where / "transcript.jsonl"
    parser = f"cmd:{sys.executable} {RECORDER} {record} node {NODE_PARSER}"
    flags = ["--templates", TEMPLATE, "-n", "0", "--out", str(where / "run")]
    command = [sys.executable, "-m", "chatparity", "sweep", "--parser", parser, *flags]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_shipped_transcript_fits_the_schema() -> None:
    exchanges = [json.loads(line) for line in SHIPPED.read_text(encoding="utf-8").splitlines()]
    ops = [exchange["request"]["op"] for exchange in exchanges]
    assert ops[:6] == ["info", "open", "parse", "stream", "parse", "close"]
    for exchange in exchanges:
        assert problems(None, exchange["request"]) == []
        assert problems(f"answer_to_{exchange['request']['op']}", exchange["answer"]) == []


def test_every_request_of_a_sweep_fits_the_schema(transcript: list[dict[str, Any]]) -> None:
    ops = {exchange["request"]["op"] for exchange in transcript}
    assert ops >= {"info", "open", "parse", "stream", "close"}
    for exchange in transcript:
        assert problems(None, exchange["request"]) == [], exchange["request"]


def test_every_answer_of_the_example_fits_the_schema(transcript: list[dict[str, Any]]) -> None:
    for exchange in transcript:
        answer, op = exchange["answer"], exchange["request"]["op"]
        assert answer["id"] == exchange["request"]["id"]
        assert problems(f"answer_to_{op}", answer) == [] or problems("error_answer", answer) == [], answer


def test_info_comes_first_and_a_reader_is_used_from_its_open_to_its_close(
    transcript: list[dict[str, Any]],
) -> None:
    assert transcript[0]["request"]["op"] == "info"
    assert all(exchange["request"]["op"] != "info" for exchange in transcript[1:])
    opened: set[str] = set()
    closed = 0
    for exchange in transcript:
        request, answer = exchange["request"], exchange["answer"]
        if request["op"] == "open" and "reader" in answer:
            opened.add(json.dumps(answer["reader"]))
        elif "reader" in request:
            assert json.dumps(request["reader"]) in opened, request
        if request["op"] == "close":
            opened.remove(json.dumps(request["reader"]))
            closed += 1
    assert closed > 0 and not opened


def test_a_request_off_the_schema_is_caught() -> None:
    assert problems(None, {"id": 1, "op": "parse", "reader": 0, "text": "Hi"})
    assert problems(None, {"id": 1, "op": "stream", "reader": 0, "chunks": [], "finish": True})
    assert problems(None, {"id": 1, "op": "shutdown"})
    assert problems("answer_to_open", {"id": 1, "reader": 0, "unsupported": "both"})
    assert problems("answer_to_parse", {"id": 1, "reading": {"content": "Hi"}})


def test_the_session_the_harness_sends_fits_the_schema() -> None:
    for planned in catalog.plan("quick", templates=TEMPLATE, mode="think/*"):
        session = json.loads(json.dumps(session_json(planned.session)))
        assert problems("session", session) == []
        assert set(session) == set(SCHEMA["$defs"]["session"]["required"])
        assert "kwargs" not in session
        passed_as_kwarg = "enable_thinking" in session["chat_template_kwargs"]
        assert passed_as_kwarg == ("enable_thinking=" in planned.session.mode.label)
