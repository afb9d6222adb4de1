"""What one case's rows share (`harness.runner.CaseRun`): readings written once per case, kept apart by
their problems as well as their text."""

from __future__ import annotations

import json
from typing import Any

from chatparity.model import Message, Rejection, ToolCall
from harness.runner import CaseRun


def case_run() -> CaseRun:
    """A CaseRun whose case the written readings do not look at."""
    case: Any = None
    return CaseRun(case=case, base={}, oracle=case)


def test_equal_readings_with_other_problems_are_written_apart() -> None:
    run = case_run()
    call = (ToolCall("get_weather", '{"city": "Rio"}'),)
    quiet, noted = Message("Hi", tool_calls=call), Message("Hi", tool_calls=call, problems=("bad_args",))
    assert json.loads(run.reading_json(quiet)) == {"content": "Hi", "reasoning_content": "",
                                                   "tool_calls": [{"name": "get_weather",
                                                                   "arguments": '{"city": "Rio"}', "id": ""}]}
    assert json.loads(run.reading_json(noted))["problems"] == ["bad_args"]
    assert "problems" not in json.loads(run.reading_json(Message("Hi", tool_calls=call)))


def test_a_rejection_and_a_message_are_written_apart() -> None:
    run = case_run()
    assert json.loads(run.reading_json(Rejection("off format", ()))) == {"rejected": "off format", "problems": []}
    assert json.loads(run.reading_json(Message("off format", problems=()))) == {
        "content": "off format", "reasoning_content": "", "tool_calls": [], "problems": []}
