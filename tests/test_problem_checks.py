"""The problems_agree check: the problems a parser reports beside a finished reading agree with the reading and
the request; the readings carry problems through the Python and JSON protocols without changing how they
compare."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from chatparity.model import PROBLEMS, Message, Rejection, Reply, ToolCall, reading_from_json
from corpora.corpus_file import read_line
from harness.problem_checks import Asked, problems_break
from harness.structural_checks import check_reading, reply_problems_break

ROOT = Path(__file__).resolve().parent.parent
CALL = ToolCall("get_weather", '{"city": "Rio"}')
OTHER = ToolCall("get_time", "{}")
SCHEMAS = {"get_weather": {"type": "object"}, "get_time": {"type": "object"}}
ASKED = Asked(calls=True, parallel=False)


def reply(partial: bool = False) -> Reply:
    """A reply of the tests."""
    return Reply("text", partial, "test", "shape", None)


def agreement(reading: Message | Rejection, reference: Message | Rejection | None, *,
              asked: Asked = ASKED, partial: bool = False) -> bool | None:
    """The problems_agree verdict of a parser's reading against llama.cpp's."""
    return check_reading(reading, reply(partial), SCHEMAS, (), asked, reference).problems_agree


@pytest.mark.parametrize(
    ("reading", "asked", "broken"),
    [
        (Message("Hi.", problems=("nope",)), ASKED, "'nope' is not a problem"),
        (Message("Hi."), ASKED, "no_action missing"),
        (Message(tool_calls=(CALL,), problems=("no_action",)), ASKED, "no_action reported"),
        (Message("Hi.", problems=("no_action", "cut_off")), ASKED, "no_action reported"),
        (Message(tool_calls=(CALL, OTHER)), ASKED, "multiple_actions missing"),
        (Message(tool_calls=(CALL, OTHER), problems=("multiple_actions",)), Asked(True, True),
         "multiple_actions reported"),
        (Message("Sure: ", tool_calls=(CALL,)), ASKED, "prose_before_action missing"),
        (Message(" \n", tool_calls=(CALL,), problems=("prose_before_action",)), ASKED,
         "prose_before_action reported"),
        (Message(tool_calls=(CALL,), problems=("bad_args",)), ASKED, "bad_args reported"),
        (Message(tool_calls=(CALL,), problems=("bad_syntax",)), ASKED, "accepted reading reported with bad_syntax"),
        (Message(tool_calls=(CALL,), problems=("unknown_action",)), ASKED, "with unknown_action"),
        (Rejection("no", problems=("bad_args",)), ASKED, "without bad_syntax"),
        (Rejection("no", problems=("bad_syntax", "no_action")), ASKED, "with no_action"),
    ],
)
def test_problems_that_contradict_the_reading_break_the_check(
    reading: Message | Rejection, asked: Asked, broken: str
) -> None:
    found = problems_break(reading, asked)
    assert found is not None and found.startswith("problems_agree: ") and broken in found


@pytest.mark.parametrize(
    ("reading", "asked"),
    [
        (Message("Hi.", problems=("no_action",)), ASKED),
        (Message("Hi.", problems=()), Asked(calls=False, parallel=False)),
        (Message("Hi.", problems=("cut_off", "unclosed_think")), ASKED),
        (Message(tool_calls=(CALL, OTHER), problems=()), Asked(True, True)),
        (Message("Sure: ", tool_calls=(CALL, OTHER), problems=("multiple_actions", "prose_before_action")), ASKED),
        (Message(tool_calls=(ToolCall("get_weather", '{"city": '),), problems=("bad_args",)), ASKED),
        (Message("Hi.", problems=("no_action", "text_after_action")), ASKED),
        (Rejection("no", problems=("bad_syntax", "unknown_action")), ASKED),
    ],
)
def test_problems_the_reading_makes_hold_the_check(reading: Message | Rejection, asked: Asked) -> None:
    assert problems_break(reading, asked) is None


@pytest.mark.parametrize(
    ("reading", "meant", "asked", "broken"),
    [
        (Message("Hi.", "Hmm", problems=("no_action",)), ("unclosed_think",), ASKED, "unclosed_think missing"),
        (Rejection("no", problems=("bad_syntax", "text_after_action")), ("unknown_action",), ASKED,
         "with text_after_action (meant unknown_action)"),
        (Rejection("no", problems=("bad_syntax", "unknown_action")), ("bad_args",), ASKED, "(meant bad_args)"),
    ],
)
def test_problems_that_miss_what_the_reply_was_written_to_show_break_the_check(
    reading: Message | Rejection, meant: tuple[str, ...], asked: Asked, broken: str
) -> None:
    assert problems_break(reading, asked) is None
    found = problems_break(reading, asked, meant)
    assert found is not None and broken in found


@pytest.mark.parametrize(
    ("reading", "meant", "asked"),
    [
        (Message("Hmm", problems=("no_action",)), ("unclosed_think",), ASKED),
        (Message("Hi.", "Hmm", problems=("no_action", "unclosed_think")), ("unclosed_think",), ASKED),
        (Rejection("no", problems=("bad_syntax",)), ("unknown_action",), ASKED),
        (Rejection("no", problems=("bad_syntax", "unknown_action", "text_after_action")), ("unknown_action",), ASKED),
        (Rejection("no", problems=("bad_syntax", "text_after_action")), ("bad_args",), Asked(False, False)),
    ],
)
def test_a_meant_problem_is_judged_only_where_the_reading_shows_it(
    reading: Message | Rejection, meant: tuple[str, ...], asked: Asked
) -> None:
    assert problems_break(reading, asked, meant) is None


@pytest.mark.parametrize(
    ("reading", "meant", "broken"),
    [
        (Message("", "Hmm", problems=("unclosed_think",)), ("unclosed_think",), "cut_off missing"),
        (Message("", "Hmm", problems=("cut_off",)), ("unclosed_think",), "unclosed_think missing"),
        (Message(tool_calls=(ToolCall("get_weather", '{"city": "R'),)), ("cut_off",), "cut_off missing"),
        (Message(problems=("bad_syntax", "no_action")), (), "a rejection reported with no_action"),
        (Message("Hi.", problems=("bad_syntax",)), (), "accepted reading reported with bad_syntax"),
    ],
)
def test_a_cut_reply_reports_what_its_cut_leaves_open(
    reading: Message, meant: tuple[str, ...], broken: str
) -> None:
    found = problems_break(reading, ASKED, meant, partial=True)
    assert found is not None and broken in found


@pytest.mark.parametrize(
    ("reading", "meant"),
    [
        (Message("", "Hmm", problems=("unclosed_think", "cut_off")), ("unclosed_think",)),
        (Message("Hmm", problems=("no_action",)), ("unclosed_think",)),
        (Message(tool_calls=(ToolCall("get_weather", '{"city": "R'),), problems=("cut_off",)), ("cut_off",)),
        (Message(problems=("cut_off",)), ("cut_off",)),
        (Message(problems=("bad_syntax",)), ()),
        (Message(problems=("bad_syntax", "unknown_action")), ()),
    ],
)
def test_a_cut_reply_is_held_to_what_its_reading_shows(reading: Message, meant: tuple[str, ...]) -> None:
    assert problems_break(reading, ASKED, meant, partial=True) is None


def test_the_shapes_written_with_a_problem_carry_it_and_the_check_reads_it() -> None:
    meant = Reply("text", False, "test", "shape", None, "", (), ("unknown_action",))
    wrong = Rejection("no", problems=("bad_syntax", "bad_args"))
    assert check_reading(wrong, meant, SCHEMAS, (), ASKED, Rejection("oracle: no")).problems_agree is False
    assert check_reading(wrong, reply(), SCHEMAS, (), ASKED, Rejection("oracle: no")).problems_agree is True
    assert meant == reply(), "meant problems do not change which reply it is"


def test_problems_are_judged_only_on_a_reading_that_matches_llama_cpp() -> None:
    silent = Message("Hi.", problems=())
    assert agreement(silent, Message("Hi.")) is False
    assert agreement(silent, Message("Hello.")) is None
    assert agreement(silent, Message("Hi."), partial=True) is False
    assert agreement(silent, None) is None
    assert agreement(Message("Hi."), Message("Hi.")) is None
    assert agreement(Rejection("no", problems=()), Rejection("oracle: no")) is False
    assert agreement(Rejection("no", problems=("bad_syntax",)), Rejection("oracle: no")) is True
    assert agreement(Rejection("no", problems=("bad_syntax",)), Message("Hi.")) is None


def test_problems_ride_with_a_reading_without_changing_how_it_compares() -> None:
    message = Message("Hi.", problems=("no_action",))
    assert message == Message("Hi.") and hash(message) == hash(Message("Hi."))
    assert message.to_json()["problems"] == ["no_action"] and "problems" not in Message("Hi.").to_json()
    assert reading_from_json(json.loads(json.dumps(message.to_json()))).problems == ("no_action",)
    assert reading_from_json({"content": "Hi."}).problems is None
    rejection = reading_from_json({"rejected": "no", "problems": ["bad_syntax"]})
    assert rejection == Rejection("no") and rejection.problems == ("bad_syntax",)


def test_a_python_parser_s_problems_are_read_by_value() -> None:
    class Problem(str, Enum):
        NO_ACTION = "no_action"

    class Written:
        content, reasoning_content, tool_calls, problems = "Hi.", "", (), (Problem.NO_ACTION,)

    class Bare:
        content, reasoning_content, tool_calls = "Hi.", "", ()

    assert Message.of(Written()).problems == ("no_action",)
    assert Message.of(Bare()).problems is None


def test_a_converted_message_is_the_message_its_fields_make() -> None:
    class Call:
        name, arguments = "get_weather", '{"city": "Paris"}'

    class Read:
        content, reasoning_content, tool_calls, problems = None, "Hm.", [Call()], ()

    made = Message.of(Read())
    built = Message("", "Hm.", (ToolCall("get_weather", '{"city": "Paris"}', ""),), ())
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    assert made.to_json() == built.to_json() and made.problems == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.content = "changed"  # type: ignore[misc]


def test_the_protocol_schema_names_the_same_problems() -> None:
    schema = json.loads((ROOT / "harness" / "protocol.schema.json").read_text(encoding="utf-8"))
    assert tuple(schema["$defs"]["problems"]["items"]["enum"]) == PROBLEMS


@pytest.mark.parametrize("fault", ["text_after_action", "bad_args", "cut_off", "unclosed_think"])
def test_a_fault_reported_on_a_reply_read_as_the_message_it_was_written_for_breaks_the_check(fault: str) -> None:
    written = Message(tool_calls=(CALL,))
    read = Message(tool_calls=(CALL,), problems=(fault,))
    found = problems_break(read, ASKED, truth=written)
    assert found is not None and fault in found and "exactly the message" in found


def test_a_fault_is_not_judged_against_a_truth_the_reading_differs_from_or_on_a_reply_meant_to_show_it() -> None:
    read = Message(tool_calls=(CALL,), problems=("text_after_action",))
    assert problems_break(read, ASKED, truth=Message(content="It is sunny.", tool_calls=(CALL,))) is None
    assert problems_break(read, ASKED, meant=("text_after_action",), truth=Message(tool_calls=(CALL,))) is None
    assert problems_break(Message(tool_calls=(CALL,), problems=("cut_off",)), ASKED, partial=True,
                          truth=Message(tool_calls=(CALL,))) is None


ROCKET = ToolCall("launch_rocket", '{"target": "moon"}')


def file_reply(tmp_path: Path, **fields: Any) -> Reply:
    """The reply of a corpus file line calling a tool that was not offered, its truth that call."""
    line = {"id": "x", "template": "t.jinja", "thinking": False, "tools": "auto", "kwargs": {},
            "reply": "<tool_call>launch_rocket</tool_call>", "partial": False,
            "truth": {"tool_calls": [{"name": ROCKET.name, "arguments": ROCKET.arguments}]}, **fields}
    return read_line(tmp_path / "outside.jsonl", 1, json.dumps(line)).as_reply()


def file_verdict(reading: Message | Rejection, of: Reply) -> bool | None:
    """problems_agree of a reading that matches llama.cpp's, of a corpus file line's reply."""
    return check_reading(reading, of, SCHEMAS, (), ASKED, reading).problems_agree


@pytest.mark.parametrize("problems", [("unknown_action",), ("text_after_action",), ("unclosed_think",)])
def test_a_corpus_file_line_that_states_no_meant_problems_is_not_judged_by_them(
    tmp_path: Path, problems: tuple[str, ...]
) -> None:
    read = Message(tool_calls=(ROCKET,), problems=problems)
    assert file_verdict(read, file_reply(tmp_path)) is True
    assert file_verdict(read, file_reply(tmp_path, meant_problems=[])) is False
    generated = Reply("<tool_call>launch_rocket</tool_call>", False, "test", "shape", Message(tool_calls=(ROCKET,)))
    assert file_verdict(read, generated) is False


def test_a_rejection_of_a_line_that_states_no_meant_problems_may_name_any_cause(tmp_path: Path) -> None:
    refused = Rejection("no", problems=("bad_syntax", "text_after_action"))
    assert file_verdict(refused, file_reply(tmp_path)) is True
    assert file_verdict(refused, file_reply(tmp_path, meant_problems=["unknown_action"])) is False


@pytest.mark.parametrize(
    ("reading", "broken"),
    [
        (Message(tool_calls=(ROCKET,), problems=("bad_syntax",)), "accepted reading reported with bad_syntax"),
        (Message("Sure.", tool_calls=(ROCKET,)), "prose_before_action missing"),
        (Message("Hi."), "no_action missing"),
        (Message(tool_calls=(ROCKET,), problems=("bad_args",)), "bad_args reported"),
        (Rejection("no", problems=("unknown_action",)), "without bad_syntax"),
    ],
)
def test_a_line_that_states_no_meant_problems_is_judged_by_what_its_reading_shows(
    tmp_path: Path, reading: Message | Rejection, broken: str
) -> None:
    found = reply_problems_break(reading, file_reply(tmp_path), ASKED)
    assert found is not None and broken in found
