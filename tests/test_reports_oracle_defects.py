"""Oracle defects: one entry per root cause, main apart from robustness, whole reads apart from streams, each
with its reproducers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from reports_store_builder import StoreBuilder

from reports.defect_judging import (
    contradictory_kwargs,
    departure,
    robustness_reason,
    same_meaning,
    written_in_grammar_order,
)
from reports.defect_repro import stream_case, whole_case
from reports.defects_markdown import defects_markdown
from reports.oracle_defects import MAIN, ROBUSTNESS, STREAM, WHOLE_READ, oracle_defects, summary_line
from reports.runs import load_run
from reports.show import Request


def message(content: str = "", reasoning: str = "", calls: tuple[tuple[str, str, str], ...] = ()) -> dict[str, object]:
    """A reading dict."""
    return {
        "content": content,
        "reasoning_content": reasoning,
        "tool_calls": [{"name": name, "arguments": arguments, "id": call_id} for name, arguments, call_id in calls],
    }


CALL = (("get", '{"city": "Rio", "days": 4}', ""),)
REQUEST = Request([{"role": "user", "content": "Rio?"}], [], "auto", False, True, {"effort": "low"}, "deepseek")


@pytest.mark.parametrize(
    ("oracle", "truth", "kind", "construct"),
    [
        ({"rejected": "no"}, message(calls=CALL), "rejects the reply", "a reply with calls"),
        ({"rejected": "no"}, message("hi", "hm"), "rejects the reply", "a reply without calls"),
        (message("<tool_call>x"), message(calls=CALL), "loses a call", "0 of 1 calls read"),
        (message(calls=(("get", '{"city": "Rio", "days": "4"}', ""),)), message(calls=CALL), "changes a call",
         "reads a non-string argument as a string"),
        (message(calls=(("get", '{"city": ', ""),)), message(calls=CALL), "returns arguments that are not JSON",
         "arguments text not JSON"),
        (message("Hi<|im_end|>"), message("Hi"), "leaves markers in the text", "<|im_end|> in content"),
        (message("I think. Hi"), message("Hi", "I think."), "moves text", "reasoning read as content"),
    ],
)
def test_a_departure_names_its_construct_without_names(
    oracle: dict[str, object], truth: dict[str, object], kind: str, construct: str
) -> None:
    assert departure(oracle, truth, ("<|im_end|>",)) == (kind, construct)


def test_a_refusal_after_a_tool_result_is_one_construct_whatever_the_reply() -> None:
    assert departure({"rejected": "no"}, message(calls=CALL), (), "after_tool") == departure(
        {"rejected": "no"}, message("hi"), (), "after_tool") == ("rejects the reply", "a reply after a tool result")


def test_meaning_leaves_edge_whitespace_and_unwritten_ids_aside() -> None:
    assert same_meaning(message("\nHi "), message("Hi"))
    assert same_meaning(message(calls=(("get", '{"days": 4, "city": "Rio"}', "0"),)), message(calls=CALL))
    assert not same_meaning(message(calls=(("get", '{"city": "Rio", "days": 4}', "0"),)),
                            message(calls=(("get", '{"city": "Rio", "days": 4}', "Xq7"),)))
    assert not same_meaning(message("H i"), message("Hi"))


def test_robustness_reasons() -> None:
    assert contradictory_kwargs(False, {"thinking": True}).startswith("contradictory kwargs")
    assert contradictory_kwargs(True, {"thinking_mode": "disabled"}).startswith("contradictory kwargs")
    assert contradictory_kwargs(False, {"enable_thinking": True, "reasoning_effort": "low"}) == ""
    assert robustness_reason("roundtrip", "one_call", False, True, "rejects @3 from 0", "") == ""
    assert robustness_reason("roundtrip", "one_call_with_json_literals", False, True, "rejects @3", "") != ""
    assert robustness_reason("toolcall", "text_after_call", False, True, "accepts from 0", "") == ""
    assert "never writes" in robustness_reason("toolcall", "text_after_call", False, True, "rejects @9 from 0", "")
    assert "does not offer" in robustness_reason("toolcall", "unknown_tool_name", False, False, "accepts", "")
    assert "schema" in robustness_reason("toolcall", "parameter_not_in_schema", False, True, "accepts", "")
    assert "corrupted" in robustness_reason("toolcall", "malformed_arguments", False, False, "accepts", "")
    assert robustness_reason("partial", "roundtrip:one_call@in_name", True, False, "accepts", "") == ""
    assert robustness_reason("roundtrip", "one_call", False, True, "", "contradictory kwargs: x") != ""


STREAM_DEFECT = {
    "kind": "retraction", "at": 9, "shown_at": 8, "finish": False, "field": "tool_calls", "marker": "",
    "shown": message(calls=CALL), "later": message("x"), "error": "Invalid diff: now finding less tool calls!",
    "client": message(calls=CALL),
}


def defect_run(directory: Path) -> Path:
    """fam's template a.jinja (a.jinja and b.jinja of family fam) loses the call of its round trip in 3 cases (c1
    and c2 of a, c3 of b), also breaking a structural check; a text-after-call reply the grammar rejects (c4) is
    robustness; a round trip the grammar cannot write but llama.cpp reads right (c5: no entry where the tools that
    say the grammar's property order are not known); a stream that takes back a call (c6) and a cut reply whose
    stream is that of a finished reply (c7, counted under c6's)."""
    builder = StoreBuilder(directory)
    lost, truth = json.dumps(message("<tool_call>…")), json.dumps(message(calls=CALL))
    for case, template, reply in (("c1", "a.jinja", "<tool_call>{...}</tool_call>"),
                                  ("c2", "a.jinja", "<tool_call>{}"), ("c3", "b.jinja", "<tc>")):
        for chunking in ("whole", "char"):
            builder.row(case, template, chunking, shape="one_call", oracle_vs_truth="calls", truth=truth,
                        oracle_reading=lost, reply=reply, oracle_grammar="accepts from 0",
                        oracle_arguments_json=0, oracle_structure_detail="arguments_json: tool_calls[0] broken")
    builder.row("c4", "a.jinja", origin="toolcall", shape="text_after_call", oracle_vs_truth="rejects",
                truth=truth, oracle_reading=json.dumps({"rejected": "bad"}), reply="<tool_call>{}</tool_call> ok",
                oracle_grammar="rejects @25 from 0")
    builder.row("c5", "a.jinja", shape="one_call", oracle_vs_truth="match", truth=truth,
                oracle_reading=truth, reply="[TOOL_CALLS]get", oracle_grammar="rejects @3 from 0")
    builder.row("c6", "a.jinja", shape="one_call", reply="<tool_call>{}x", oracle_grammar="accepts from 0",
                oracle_stream=json.dumps([STREAM_DEFECT]))
    builder.row("c7", "a.jinja", origin="partial", shape="roundtrip:one_call@in_name", partial=1,
                reply="<tool_call>{}", oracle_stream=json.dumps([{**STREAM_DEFECT, "at": 5, "shown_at": 4}]))
    for session in builder.sessions.values():
        session["family"] = "fam"
    for row in builder.rows:
        row["family"] = "fam"
    return builder.write()


def test_entries_are_grouped_by_root_cause_and_kept_apart(tmp_path: Path) -> None:
    run = load_run(defect_run(tmp_path))
    report = oracle_defects(run, requests=False)
    entries = report.clusters.set_index("id")
    assert list(entries.index) == ["W1", "S1", "RW1"]
    lost = entries.loc["W1"]
    assert (lost["part"], lost["section"], lost["kind"], lost["construct"]) == (
        WHOLE_READ, MAIN, "loses a call", "0 of 1 calls read")
    assert (lost["cases"], lost["templates"], lost["case_id"]) == (3, 2, "c2")
    assert "c5" not in set(report.counts.get("case_id", []))
    assert (entries.loc["S1", "part"], entries.loc["S1", "cases"], entries.loc["S1", "case_id"]) == (STREAM, 1, "c6")
    robust = entries.loc["RW1"]
    assert (robust["section"], robust["case_id"]) == (ROBUSTNESS, "c4") and "never writes" in robust["reason"]
    assert report.summary()["whole_main_cases"] == 3 and report.summary()["stream_main_cases"] == 1
    assert summary_line(report.summary()).startswith(
        "llama.cpp's own defects (against what the template means): whole reads 1 (3 cases), streams 1"
    )


def test_families_that_share_llama_cpps_parser_share_an_entry(tmp_path: Path) -> None:
    directory = defect_run(tmp_path / "shared")
    connection = sqlite3.connect(directory / "rows.sqlite")
    connection.execute("UPDATE rows SET family = 'fam2' WHERE template = 'b.jinja'")
    connection.commit()
    connection.close()
    entries = oracle_defects(load_run(directory), requests=False).clusters.set_index("id")
    assert (entries.loc["W1", "family"], entries.loc["W1", "cases"]) == ("fam, fam2", 3)
    connection = sqlite3.connect(directory / "rows.sqlite")
    connection.execute("UPDATE rows SET syntax = 'other' WHERE template = 'b.jinja'")
    connection.commit()
    connection.close()
    apart = oracle_defects(load_run(directory), requests=False).clusters
    assert sorted(apart[apart["kind"] == "loses a call"]["family"]) == ["fam", "fam2"]


def test_the_markdown_leads_with_the_main_entries_and_never_calls_a_cut_reply_finished(tmp_path: Path) -> None:
    run = load_run(defect_run(tmp_path))
    text = defects_markdown(oracle_defects(run, requests=False), run)
    read_first = text.split("## Read first")[1].split("\n## ")[0]
    assert "| W1 " in read_first and "RW1" not in read_first
    assert "llama.cpp's grammar writes it" in read_first and "| yes " in read_first
    sections = text.split("\n## ")
    robustness = next(part for part in sections if part.startswith("Robustness, whole reads"))
    assert "### RW1." in robustness and "### W1." not in robustness
    assert "compute_diffs threw, so llama-server ends the stream" in text
    assert "a cut reply (partial)" not in text.split("### S1.")[1].split("###")[0]
    assert text == defects_markdown(oracle_defects(load_run(run.directory), requests=False), run)


def test_a_cut_reply_alone_is_judged_as_a_stream_never_as_a_finished_reply(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path)
    builder.row("c7", "a.jinja", origin="partial", shape="roundtrip:one_call@in_name", partial=1,
                reply="<tool_call>{}", oracle_vs_truth="calls", truth=json.dumps(message(calls=CALL)),
                oracle_reading=json.dumps(message("<tool_call>{}")),
                oracle_stream=json.dumps([{**STREAM_DEFECT, "at": 5, "shown_at": 4}]))
    run = load_run(builder.write())
    report = oracle_defects(run, requests=False)
    assert list(report.clusters["part"]) == [STREAM]
    assert "a cut reply (partial), judged as a stream" in defects_markdown(report, run)


def test_the_reproducers_carry_bos_eos_kwargs_and_the_failing_prefixes() -> None:
    case = whole_case("t", "x.jinja", "<s>", "</s>", REQUEST, "[TOOL_CALLS]get", message(calls=CALL))
    assert 'read_file("models/templates/x.jinja"), /* bos= */ R"_(<s>)_", /* eos= */ R"_(</s>)_"' in case
    assert 'inputs.chat_template_kwargs["effort"] = R"_("low")_";' in case
    assert "assert_msg_equals(expected, common_chat_parse(reply, /* is_partial= */ false" in case
    streamed = stream_case("t", "x.jinja", "", "", REQUEST, "<tool_call>{}x", STREAM_DEFECT)
    assert "reply.substr(0, 8), /* is_partial= */ true" in streamed and "reply.substr(0, 9)" in streamed
    assert "compute_diffs(shown, later);  // throws: Invalid diff: now finding less tool calls!" in streamed


def test_arguments_count_in_the_order_llama_cpps_grammar_writes_them() -> None:
    tools = [{"type": "function", "function": {"name": "get", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["days"]}}}]
    assert written_in_grammar_order('get {"days": 4, "city": "Rio"}', message(calls=CALL), tools)
    assert not written_in_grammar_order('get {"city": "Rio", "days": 4}', message(calls=CALL), tools)


def qwen3_session() -> str:
    """The id of Qwen3's quick session thinking with tools offered (auto), one user question."""
    from corpora import planning

    planned = planning.plan("quick", "Qwen-Qwen3-0.6B.jinja")
    return next(p.session.id for p in planned if p.session.mode.label == "think/auto" and
                p.session.conversation == "single")


QWEN3_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio", "days": 4}}\n</tool_call>'


def test_a_planted_defect_of_a_real_template_is_rendered_with_its_request_and_test_case(tmp_path: Path) -> None:
    session = qwen3_session()
    builder = StoreBuilder(tmp_path)
    builder.session("Qwen-Qwen3-0.6B.jinja", family="Qwen3", mode="think/auto", session_id=session)
    truth = message(calls=(("get_weather", '{"city": "Rio", "days": 4}', ""),))
    builder.rows.append({**builder.row("p1", "Qwen-Qwen3-0.6B.jinja", mode="think/auto").rows.pop(),
                         "session_id": session, "family": "Qwen3", "shape": "one_call", "reply": QWEN3_CALL,
                         "truth": json.dumps(truth), "oracle_vs_truth": "rejects", "oracle_grammar": "accepts from 0",
                         "oracle_reading": json.dumps({"rejected": "planted"})})
    run = load_run(builder.write())
    report = oracle_defects(run)
    entry = report.clusters.iloc[0]
    assert (entry["id"], entry["section"], entry["kind"], entry["writable"]) == ("W1", MAIN, "rejects the reply", True)
    text = defects_markdown(report, run)
    assert "llama-server --jinja --chat-template-file models/templates/Qwen-Qwen3-0.6B.jinja" in text
    assert '"tool_choice": "auto"' in text and '"stream": false' in text and "get_weather" in text
    assert 'read_file("models/templates/Qwen-Qwen3-0.6B.jinja")' in text
    assert report.to_json()["entries"][0]["request"]["tool_choice"] == "auto"


def test_a_reading_the_template_writes_as_the_same_reply_is_as_right_as_the_truth(tmp_path: Path) -> None:
    from reports.oracle_defects import Plans

    session = qwen3_session()
    builder = StoreBuilder(tmp_path)
    builder.session("Qwen-Qwen3-0.6B.jinja", family="Qwen3", mode="think/auto", session_id=session)
    plans = Plans(load_run(builder.write()))
    truth = message(calls=(("get_weather", '{"city": "Rio", "days": 4}', ""),))
    assert plans.planned("Qwen-Qwen3-0.6B.jinja", session) is not None
    reply = "<think>\n\n</think>\n\n" + QWEN3_CALL
    assert plans.writes_alike("Qwen-Qwen3-0.6B.jinja", session, reply, truth, truth)
    other = message(calls=(("get_weather", '{"city": "Rio", "days": "4"}', ""),))
    assert not plans.writes_alike("Qwen-Qwen3-0.6B.jinja", session, reply, other, truth)


def test_what_the_template_writes_and_the_prompt_opens_with_is_not_held_against_llama_cpp(tmp_path: Path) -> None:
    from reports.oracle_defects import Plans

    session = qwen3_session()
    builder = StoreBuilder(tmp_path)
    builder.session("Qwen-Qwen3-0.6B.jinja", family="Qwen3", mode="think/auto", session_id=session)
    plans = Plans(load_run(builder.write()))
    answer = message("It is sunny.")
    assert plans.writes_answer_so("Qwen-Qwen3-0.6B.jinja", session, "<think>\nhm\n</think>\n\nIt is sunny.", answer)
    assert not plans.writes_answer_so("Qwen-Qwen3-0.6B.jinja", session, "It is cloudy.", answer)
    prompt = plans.planned("Qwen-Qwen3-0.6B.jinja", session).session.prompt
    tail = prompt[-10:]
    assert plans.reads_prompt_tail("Qwen-Qwen3-0.6B.jinja", session, message("Hi", tail + "why"),
                                   message("Hi", "why"))
    assert not plans.reads_prompt_tail("Qwen-Qwen3-0.6B.jinja", session, message("Hi", "not the prompt why"),
                                       message("Hi", "why"))
    assert not plans.reads_prompt_tail("Qwen-Qwen3-0.6B.jinja", session, message("Hello", tail + "why"),
                                       message("Hi", "why"))


def test_a_reply_that_opens_again_the_thought_its_prompt_opened_is_not_the_templates_form(tmp_path: Path) -> None:
    from corpora import planning
    from reports.oracle_defects import Plans

    template = "MiniMax-M2.jinja"
    planned = next(p for p in planning.plan("quick", template) if p.session.mode.label == "think/auto"
                   and p.session.conversation == "single")
    assert planned.opens_thought
    builder = StoreBuilder(tmp_path)
    builder.session(template, family="MiniMax-M2", mode="think/auto", session_id=planned.session.id)
    plans = Plans(load_run(builder.write()))
    assert plans.reopens_thought(template, planned.session.id, "<think>\nHm.</think>Hi")
    assert not plans.reopens_thought(template, planned.session.id, "Hm.</think>Hi")


def test_a_refusal_counts_without_a_meaning_where_the_grammar_constrains_all_but_a_thought() -> None:
    from oracle.client import GrammarVerdict
    from reports.oracle_defects import grammar_writes_all

    call = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    template = "Qwen-Qwen3-0.6B.jinja"
    assert grammar_writes_all(call, GrammarVerdict("accepts", None, 0), template)
    thought = "<think>\nhm\n</think>\n\n"
    assert grammar_writes_all(thought + call, GrammarVerdict("accepts", None, len(thought)), template)
    assert not grammar_writes_all("Sure. " + call, GrammarVerdict("accepts", None, 6), template)
    assert not grammar_writes_all(call, GrammarVerdict("rejects", 3, 0), template)
    assert not grammar_writes_all(call, GrammarVerdict("untriggered", None, None), template)


def test_a_marker_in_an_arguments_value_is_no_leak_and_text_past_the_end_of_turn_is_robustness() -> None:
    from reports.oracle_defects import marker_in_arguments, past_end_of_turn

    assert marker_in_arguments("no_leakage: tool_calls[0].arguments holds marker '</think>' @12")
    assert not marker_in_arguments("no_leakage: content holds marker '</think>' @3")
    assert not marker_in_arguments("arguments_json: tool_calls[0] broken")
    nemotron = "NVIDIA-Nemotron-Nano-v2.jinja"
    assert "end of the turn" in past_end_of_turn(nemotron, "Hi<SPECIAL_12>\n<SPECIAL_11>Assistant\nmore")
    assert past_end_of_turn(nemotron, "Hi<SPECIAL_12>\n") == ""
    assert past_end_of_turn("llama-cpp-rwkv-world.jinja", "thought</think>answer") == ""


def test_the_same_call_twice_is_robustness_only_where_the_request_allows_one_call() -> None:
    assert "allows one" in robustness_reason("toolcall", "same_call_twice", False, False, "accepts from 0", "",
                                             parallel=False)
    assert robustness_reason("toolcall", "same_call_twice", False, False, "accepts from 0", "", parallel=True) == ""


def test_an_argument_the_template_prints_as_python_text_is_told_apart() -> None:
    from reports.oracle_defects import python_text_values

    truth = message(calls=(("create_event", '{"event": {"title": "Beach"}, "attendees": ["Ana"]}', ""),))
    assert python_text_values("<param name=\"event\">{'title': 'Beach'}</param>", truth)
    assert python_text_values("<param name=\"attendees\">['Ana']</param>", truth)
    assert not python_text_values('<param name="event">{"title": "Beach"}</param>', truth)
    assert not python_text_values("{'title': 'Beach'}", message(calls=(("get", '{"city": "Rio"}', ""),)))


def test_without_a_meaning_only_arguments_that_are_not_json_count_against_llama_cpp(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path)
    builder.row("n1", "a.jinja", shape="one_call", reply="<think>x</tool_call></think>",
                oracle_reading=json.dumps(message(reasoning="x</tool_call>")), oracle_grammar="accepts from 0",
                oracle_no_leakage=0, oracle_structure_detail="no_leakage: reasoning_content holds marker '</tool_call>'")
    builder.row("n2", "a.jinja", shape="one_call", reply="<tool_call>{}</tool_call>",
                oracle_reading=json.dumps(message(calls=(("get", "{}", ""),))), oracle_grammar="accepts from 0",
                oracle_arguments_schema=0, oracle_structure_detail="arguments_schema: tool_calls[0]: 'city' is required")
    builder.row("n3", "a.jinja", shape="one_call", reply="<tool_call>{'a': 1}</tool_call>",
                oracle_reading=json.dumps(message(calls=(("get", "{'a': 1}", ""),))), oracle_grammar="accepts from 0",
                oracle_arguments_json=0, oracle_structure_detail="arguments_json: tool_calls[0] broken")
    entries = oracle_defects(load_run(builder.write()), requests=False).clusters
    sections = dict(zip(entries["case_id"], entries["section"]))
    assert sections == {"n1": ROBUSTNESS, "n2": ROBUSTNESS, "n3": MAIN}
    assert all("may have written it so" in reason for reason in entries.loc[entries["section"] == ROBUSTNESS,
                                                                                 "reason"])


def test_a_llama_server_runs_own_layer_is_one_entry_per_policy_and_parser(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path)
    builder.stamp.update({"parser": "llama-server", "parser_spec": "llama-server",
                          "expectations": "harness/server_expectations"})
    written = message(calls=(("get_time", "{}", "Xq7Tz2Lp9"),))
    for case, template in (("m1", "nemo.jinja"), ("m2", "nemo.jinja"), ("m3", "other.jinja")):
        builder.row(case, template, "tokens", shape="one_call", reply='[TOOL_CALLS][{"name": "get_time"}]',
                    explained="streams-invented-call-ids", oracle_reading=json.dumps(written),
                    parser_reading=json.dumps(message(calls=(("get_time", "{}", ""),))))
    builder.row("g1", "oss.jinja", shape="call_in_analysis_channel", reply="<|channel|>", syntax="gpt_oss",
                explained="serves-raw-text-for-an-empty-read", oracle_reading=json.dumps(message()),
                parser_reading=json.dumps(message("<|channel|>")))
    builder.row("h1", "oss.jinja", shape="one_call", reply="x", syntax="gpt_oss", explained="held_arguments")
    run = load_run(builder.write())
    report = oracle_defects(run, requests=False)
    layer = report.server.set_index("id")
    assert list(layer.index) == ["L1", "L2"]
    assert (layer.loc["L1", "policy"], layer.loc["L1", "cases"], layer.loc["L1", "templates"]) == (
        "streams-invented-call-ids", 3, 2)
    assert (layer.loc["L2", "policy"], layer.loc["L2", "case_id"], layer.loc["L2", "server"]["content"]) == (
        "serves-raw-text-for-an-empty-read", "g1", "<|channel|>")
    text = defects_markdown(report, run)
    assert "## llama-server's own layer (2 entries, 4 cases)" in text
    assert "llama-server answers, the stream's end (tokens):" in text.split("### L1.")[1]
    assert [entry["policy"] for entry in report.to_json()["server_layer"]] == [
        "streams-invented-call-ids", "serves-raw-text-for-an-empty-read"]
    builder.stamp.update({"parser": "reply", "parser_spec": "reply", "expectations": "reply/expectations"})
    other = load_run(builder.write())
    assert oracle_defects(other, requests=False).server.empty
    assert "own layer" not in defects_markdown(oracle_defects(other, requests=False), other)


def test_a_mode_that_rejects_every_reply_is_one_entry_named_after_the_request(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path)
    refused = json.dumps({"rejected": "The model produced output that does not match the expected format"})
    replies = {"call": (message(calls=CALL), "<tool_call>{}</tool_call>"), "text": (message("Hi"), "Hi")}
    modes = {"think/auto/reasoning_format=none": ("call", "text"), "think/auto": ("call",),
             "nothink/auto": ("call", "text")}
    for mode, refusals in modes.items():
        for name, (truth, reply) in replies.items():
            builder.row(f"{mode}:{name}", "a.jinja", mode=mode, shape=name, conversation="single",
                        truth=json.dumps(truth), reply=reply, oracle_grammar="accepts from 0",
                        oracle_vs_truth="rejects" if name in refusals else "match",
                        oracle_reading=refused if name in refusals else json.dumps(truth))
    entries = oracle_defects(load_run(builder.write()), requests=False).clusters
    constructs = dict(zip(entries["construct"], entries["cases"]))
    assert constructs == {"every reply, under reasoning_format none": 2, "a reply with calls": 1,
                          "every reply to the request": 2}
