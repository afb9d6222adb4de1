"""Structural checks of finished readings (arguments JSON, schema, leakage, parallel order), the whitespace kind,
and how the reports, the oracle defects and the gate use them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest
from reports_store_builder import MISMATCH_READ, StoreBuilder

from chatparity.model import Kind, Message, Mode, Rejection, Reply, Session, ToolCall, ToolMode
from corpora.corpus_file import CorpusFileError, read_line
from harness.compare import compare
from harness.problem_checks import Asked
from harness.structural_checks import SchemaCheck, Structure, check_reading, combined_structure, tool_schemas
from reports.baselines import read_baseline
from reports.commands.gate import main as gate_main
from reports.defects_markdown import defects_markdown
from reports.diff import Change, check_counts, classify_change, diff_markdown, diff_runs
from reports.divergences import classify_run
from reports.oracle_defects import oracle_defects
from reports.runs import load_run
from reports.tables import build_tables

PARAMETERS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
    "get_time": {"type": "object", "properties": {}},
}
MARKERS = ("<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>")
WEATHER = ToolCall("get_weather", '{"city": "Rio", "days": 4}')
TIME = ToolCall("get_time", "{}")
SESSION = Session("t.jinja", "", "0" * 64, "", "", Mode(False, ToolMode.AUTO), "single", ())
SCHEMAS = tool_schemas(dataclasses.replace(SESSION, tool_defs=tuple(
    {"type": "function", "function": {"name": name, "parameters": parameters}}
    for name, parameters in PARAMETERS.items()
)))
TEXT = '<tool_call>{"name": "get_weather"}</tool_call><tool_call>{"name": "get_time"}</tool_call>'


def reply(
    text: str = TEXT, truth: Message | None = None, partial: bool = False, exempt: tuple[str, ...] = ()
) -> Reply:
    """A reply of the tests."""
    return Reply(text, partial, "test", "shape", truth, "", exempt)


def checked(reading: Message | Rejection, of: Reply | None = None) -> Structure:
    """The structural checks of a reading against the test tools and markers."""
    return check_reading(reading, of or reply(), SCHEMAS, MARKERS, Asked(calls=True, parallel=True))


def test_a_good_reading_holds_every_check() -> None:
    found = checked(Message("Sure.", "Weather first.", (WEATHER, TIME)))
    assert found == Structure(True, True, True, True, None, "")


@pytest.mark.parametrize("arguments", ['{"city": "Rio"', "[1, 2]", '"Rio"', "", '{"city": "Rio"} trailing'])
def test_arguments_that_are_not_a_json_object_break_arguments_json(arguments: str) -> None:
    found = checked(Message(tool_calls=(ToolCall("get_weather", arguments),)))
    assert found.arguments_json is False and found.detail.startswith(
        "arguments_json: tool_calls[0].arguments"
    )


@pytest.mark.parametrize(
    ("call", "where"),
    [
        (
            ToolCall("launch_rocket", '{"target": "moon"}'),
            "tool_calls[0].name 'launch_rocket' is not an offered",
        ),
        (ToolCall("get_weather", '{"city": "Rio", "days": "4"}'), "tool_calls[0].arguments['days']"),
        (ToolCall("get_weather", '{"days": 4}'), "'city' is a required property"),
    ],
)
def test_a_call_off_the_schema_breaks_arguments_schema(call: ToolCall, where: str) -> None:
    found = checked(Message(tool_calls=(call,)))
    assert found.arguments_schema is False and where in found.detail
    assert found.arguments_json is True


@pytest.mark.parametrize("arguments", ["{", '{"city": "Rio"', "[1, 2]", '"Rio"', ""])
@pytest.mark.parametrize("schemas", [SCHEMAS, {"get_weather": None}], ids=["schema", "no valid schema"])
def test_arguments_that_are_not_a_json_object_break_arguments_schema_too(
    arguments: str, schemas: dict[str, SchemaCheck | None]
) -> None:
    reading = Message(tool_calls=(ToolCall("get_weather", arguments),))
    found = check_reading(reading, reply(), schemas, MARKERS, Asked(True, True))
    assert found.arguments_json is False and found.arguments_schema is False


def test_llama_cpp_s_unparsable_arguments_do_not_hold_the_schema_the_parser_s_closed_ones_break() -> None:
    oracle = checked(Message(tool_calls=(ToolCall("get_weather", "{"),)))
    parser = checked(Message(tool_calls=(ToolCall("get_weather", "{}"),)))
    assert (oracle.arguments_json, parser.arguments_json) == (False, True)
    assert (oracle.arguments_schema, parser.arguments_schema) == (False, False)
    assert "'city' is a required property" in parser.detail


def test_a_reply_marked_as_a_deliberate_violation_is_not_judged_by_that_check() -> None:
    bad = Message(tool_calls=(ToolCall("launch_rocket", '{"target": "moon"'),))
    found = checked(bad, reply(exempt=("arguments_schema",)))
    assert found.arguments_schema is None and found.arguments_json is False


@pytest.mark.parametrize(
    "reading",
    [
        Message("Hello<|im_end|>"),
        Message("", "I think</think>"),
        Message(tool_calls=(ToolCall("<tool_call>get_weather", '{"city": "Rio"}'),)),
        Message(tool_calls=(ToolCall("get_weather", '{"city": "Rio</tool_call>"}'),)),
    ],
)
def test_a_marker_in_any_text_breaks_no_leakage(reading: Message) -> None:
    found = checked(reading)
    assert found.no_leakage is False and ("no_leakage:" in found.detail or found.arguments_schema is False)


def test_a_marker_the_truth_holds_in_the_same_field_is_no_leak() -> None:
    quoted = Message("Write <tool_call> to call a tool.")
    assert checked(quoted, reply(truth=quoted)).no_leakage is True
    assert checked(quoted, reply(truth=Message("", "Write <tool_call> to call a tool."))).no_leakage is False
    twice = Message("Write <tool_call> to call a tool.<tool_call>")
    assert checked(twice, reply(truth=quoted)).no_leakage is False


def test_parallel_calls_out_of_the_written_order_or_incomplete_break_parallel_order() -> None:
    truth = Message(tool_calls=(WEATHER, TIME))
    assert checked(Message(tool_calls=(WEATHER, TIME)), reply(truth=truth)).parallel_order is True
    swapped = checked(Message(tool_calls=(TIME, WEATHER)), reply(truth=truth))
    assert swapped.parallel_order is False and "['get_time', 'get_weather'] read" in swapped.detail
    assert checked(Message(tool_calls=(WEATHER,)), reply(truth=truth)).parallel_order is False


def test_without_truth_parallel_calls_must_be_named_in_the_reply_in_the_order_read() -> None:
    assert checked(Message(tool_calls=(WEATHER, TIME))).parallel_order is True
    assert checked(Message(tool_calls=(TIME, WEATHER))).parallel_order is False
    assert checked(Message(tool_calls=(WEATHER,))).parallel_order is None


def test_a_cut_reply_is_judged_for_leakage_only_and_a_rejection_by_nothing() -> None:
    cut = checked(Message("<|im_end|>", tool_calls=(ToolCall("get_weather", '{"ci'),)), reply(partial=True))
    assert (cut.arguments_json, cut.arguments_schema, cut.parallel_order, cut.no_leakage) == (
        None,
        None,
        None,
        False,
    )
    assert checked(Rejection("no")) == Structure()


def test_streams_combine_each_check_and_name_the_first_break() -> None:
    good, bad = Structure(True, None, True, None), Structure(False, None, True, None, None, "arguments_json: x")
    assert combined_structure([good, bad]) == Structure(False, None, True, None, None, "arguments_json: x")
    assert combined_structure([good, good]) == good
    assert good.columns("oracle_")["oracle_arguments_json"] == 1
    assert good.columns()["arguments_schema"] is None


@pytest.mark.parametrize(
    ("expected", "actual", "kind"),
    [
        (Message("Hi there"), Message("Hi there\n"), Kind.WHITESPACE),
        (Message("Hi there", " I think. "), Message("Hi there", "I think."), Kind.WHITESPACE),
        (Message("Hi there"), Message("Hithere"), Kind.WHITESPACE),
        (
            Message(tool_calls=(ToolCall("f", '{"code": "a b"}'),)),
            Message(tool_calls=(ToolCall("f", '{"code": "a  b"}'),)),
            Kind.WHITESPACE,
        ),
        (Message("Hi there"), Message("Hi there!"), Kind.CONTENT),
        (Message("Hi", "x"), Message("Hi ", "y"), Kind.CONTENT),
        (Message("Hi"), Rejection("no"), Kind.REJECTS),
    ],
)
def test_whitespace_only_differences_have_their_own_kind(
    expected: Message, actual: Message, kind: Kind
) -> None:
    found = compare(expected, actual)
    assert found is not None and found.kind is kind


def test_json_whitespace_between_tokens_is_no_difference_at_all() -> None:
    left = Message(tool_calls=(ToolCall("f", '{"a": 1}'),))
    assert compare(left, Message(tool_calls=(ToolCall("f", '{"a":1}'),))) is None


LEAK = "no_leakage: content holds marker '<|im_end|>' @5"


def structural_run(directory: Path) -> Path:
    """Cases where llama.cpp leaks a marker, as the parser does (c1 without truth, c2 longer with one), the parser
    alone breaks a call's arguments (c3), and one clean case (c4)."""
    builder = StoreBuilder(directory)
    leaked = json.dumps({"content": "Hello<|im_end|>", "reasoning_content": "", "tool_calls": []})
    meant = json.dumps({"content": "Hello and a longer reply", "reasoning_content": "", "tool_calls": []})
    for case, text, truth in (
        ("c1", "Hello<|im_end|>", None),
        ("c2", "Hello<|im_end|> and a longer reply", meant),
    ):
        for chunking in ("whole", "char"):
            builder.row(
                case,
                "a.jinja",
                chunking,
                reply=text,
                truth=truth,
                oracle_reading=leaked,
                parser_reading=leaked,
                no_leakage=0,
                oracle_no_leakage=0,
                structure_detail=LEAK,
                oracle_structure_detail=LEAK,
            )
    builder.row(
        "c3",
        "a.jinja",
        "whole",
        "mismatch",
        "calls",
        arguments_json=0,
        oracle_arguments_json=1,
        no_leakage=1,
        oracle_no_leakage=1,
        structure_detail="arguments_json: tool_calls[0].arguments '{' is not JSON",
    )
    builder.row("c4", "a.jinja", "whole", no_leakage=1, oracle_no_leakage=1)
    return builder.write()


def test_a_structural_break_of_the_oracle_is_listed_as_an_oracle_defect_with_a_reproducer(
    tmp_path: Path,
) -> None:
    run = load_run(structural_run(tmp_path / "run"))
    report = oracle_defects(run, requests=False)
    leaks = report.clusters[report.clusters["kind"] == "leaks a template marker"]
    assert len(leaks) == 1
    cluster = leaks.iloc[0]
    assert cluster["construct"] == "'<|im_end|>' in content" and cluster["part"] == "whole"
    assert cluster["cases"] == 1 and cluster["case_id"] == "c1" and cluster["reply"] == "Hello<|im_end|>"
    markdown = defects_markdown(report, run)
    assert "fam: llama.cpp leaks a template marker: '<|im_end|>' in content" in markdown
    assert "chatparity show c1" in markdown and "(the corpus knows no meaning for this reply)" in markdown


def test_the_tables_count_each_check_for_the_parser_and_llama_cpp(tmp_path: Path) -> None:
    run = load_run(structural_run(tmp_path / "run"))
    table = build_tables(classify_run(run).rows).shown["template"]["structure"]
    total = table[table["template"] == "(all)"].iloc[0]
    assert total["parser no leakage"] == "2/6" and total["llama.cpp no leakage"] == "2/6"
    assert total["parser arguments json"] == "0/1" and total["llama.cpp arguments json"] == "1/1"
    assert total["parser parallel order"] == "–"


def test_a_structural_break_only_the_parser_makes_is_labelled_and_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline"
    assert (
        gate_main(["--baseline", str(baseline), "--update", str(structural_run(tmp_path / "run"))], "gate")
        == 0
    )
    lines = (baseline / "outcomes.csv").read_text().splitlines()
    pinned = f"mismatch:calls{MISMATCH_READ} !arguments_json"
    assert f"a.jinja,nothink/none,roundtrip,plain,whole,{pinned},c3" in lines
    assert "a.jinja,nothink/none,roundtrip,plain,whole char,match,c1" in lines
    assert set(read_baseline(baseline).outcomes["outcome"]) == {"match", pinned}
    old = tmp_path / "old"
    builder = StoreBuilder(old)
    builder.row("c3", "a.jinja", "whole", "mismatch", "calls")
    assert (
        gate_main(["--baseline", str(tmp_path / "old-baseline"), "--update", str(builder.write())], "gate")
        == 0
    )
    capsys.readouterr()
    head = StoreBuilder(tmp_path / "head")
    head.row("c3", "a.jinja", "whole", "mismatch", "calls", arguments_json=0, oracle_arguments_json=1)
    assert gate_main(["--baseline", str(tmp_path / "old-baseline"), str(head.write())], "gate") == 1
    printed = capsys.readouterr().out
    change = f"mismatch:calls{MISMATCH_READ} -> mismatch:calls{MISMATCH_READ} !arguments_json"
    assert "FAILING ROWS" in printed and change in printed.split("FAILING ROWS")[1]


@pytest.mark.parametrize(
    ("base", "head", "change"),
    [
        ("mismatch:calls", "mismatch:calls !arguments_schema", Change.REGRESSION),
        ("match", "match !no_leakage", Change.REGRESSION),
        ("mismatch:calls !parallel_order", "mismatch:calls", Change.FIX),
        ("mismatch:content", "mismatch:whitespace", Change.KIND_CHANGE),
    ],
)
def test_structural_checks_count_in_a_change(base: str, head: str, change: Change) -> None:
    assert classify_change(base, head) is change


def test_the_diff_counts_the_structural_breaks_of_each_run(tmp_path: Path) -> None:
    base = StoreBuilder(tmp_path / "base")
    base.row("c3", "a.jinja", "whole", "mismatch", "calls")
    head = StoreBuilder(tmp_path / "head")
    head.row("c3", "a.jinja", "whole", "mismatch", "calls", arguments_json=0, oracle_arguments_json=1)
    diff = diff_runs(load_run(base.write()), load_run(head.write()))
    counts = check_counts(diff).set_index("check")
    assert (counts.at["arguments_json", "base"], counts.at["arguments_json", "head"]) == (0, 1)
    assert diff.of(Change.REGRESSION)["head"].tolist() == [f"mismatch:calls{MISMATCH_READ} !arguments_json"]
    assert "Structural checks the parser breaks" in diff_markdown(diff, "base", "head")


def bare_line() -> dict[str, object]:
    """A corpus file line with only the required fields."""
    return {"id": "x", "template": "t.jinja", "thinking": False, "tools": "auto", "kwargs": {}, "reply": "r",
            "partial": False}


def test_a_corpus_file_line_marks_the_checks_its_reply_breaks_on_purpose(tmp_path: Path) -> None:
    line = bare_line()
    read = read_line(tmp_path / "c.jsonl", 1, json.dumps({**line, "exempt": ["arguments_schema"]}))
    assert read.as_reply().exempt == ("arguments_schema",)
    assert read_line(tmp_path / "c.jsonl", 1, json.dumps(line)).as_reply().exempt == ()
    with pytest.raises(CorpusFileError, match="exempt\\[0\\].*expected one of arguments_json"):
        read_line(tmp_path / "c.jsonl", 1, json.dumps({**line, "exempt": ["schema"]}))


def test_a_corpus_file_line_names_the_problems_its_reply_was_written_to_show(tmp_path: Path) -> None:
    line = bare_line()
    read = read_line(tmp_path / "c.jsonl", 7, json.dumps({**line, "meant_problems": ["unknown_action"]}))
    assert read.as_reply().meant_problems == ("unknown_action",)
    assert read_line(tmp_path / "c.jsonl", 7, json.dumps(line)).as_reply().meant_problems is None
    assert read_line(tmp_path / "c.jsonl", 7, json.dumps({**line, "meant_problems": []})).as_reply().meant_problems == ()
    with pytest.raises(CorpusFileError, match="c.jsonl:7: field 'meant_problems\\[1\\]'.*got 'unknown'"):
        read_line(tmp_path / "c.jsonl", 7, json.dumps({**line, "meant_problems": ["bad_args", "unknown"]}))
    with pytest.raises(CorpusFileError, match="'meant_problems'.*expected a list of problems"):
        read_line(tmp_path / "c.jsonl", 7, json.dumps({**line, "meant_problems": "bad_args"}))


def test_a_tuple_written_as_a_list_of_item_schemas_is_checked_in_draft_7() -> None:
    pair = {"type": "object", "properties": {"seats": {"type": "array", "items": [{"type": "integer"}] * 2}}}
    tools = ({"type": "function", "function": {"name": "pair", "parameters": pair}},)
    schemas = tool_schemas(dataclasses.replace(SESSION, tool_defs=tools))
    check = schemas["pair"]
    assert list(schemas) == ["pair"] and check is not None
    assert check.schema == pair and check.draft is jsonschema.Draft7Validator
    held = Message(tool_calls=(ToolCall("pair", '{"seats": [14, 15]}'),))
    broken = Message(tool_calls=(ToolCall("pair", '{"seats": [14, "15"]}'),))
    assert check_reading(held, reply(), schemas, MARKERS, Asked(True, True)).arguments_schema is True
    verdict = check_reading(broken, reply(), schemas, MARKERS, Asked(True, True))
    assert verdict.arguments_schema is False and "['seats'][1]" in verdict.detail
    again = check_reading(broken, reply(), schemas, MARKERS, Asked(True, True))
    assert again == verdict and list(check.found) == ['{"seats": [14, 15]}', '{"seats": [14, "15"]}']


def test_a_tool_without_a_valid_schema_has_only_its_name_checked() -> None:
    tools = ({"type": "function", "function": {"name": "odd", "parameters": {"type": "nonsense"}}},)
    session = dataclasses.replace(SESSION, tool_defs=tools)
    schemas = tool_schemas(session)
    assert schemas == {"odd": None}
    reading = Message(tool_calls=(ToolCall("odd", '{"a": 1}'),))
    assert check_reading(reading, reply(), schemas, MARKERS, Asked(True, True)).arguments_schema is True
    other = Message(tool_calls=(ToolCall("even", '{"a": 1}'),))
    assert check_reading(other, reply(), schemas, MARKERS, Asked(True, True)).arguments_schema is False
