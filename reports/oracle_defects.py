"""Where llama.cpp itself is wrong, one entry per root cause (llama.cpp's parser for the format × failing construct,
naming the template families that share it): its whole
reads of finished replies against the message the template meant, the grammar it samples under against the
template's own replies, and its own streams as llama-server runs them; replies whose meaning the template or the
grammar does not give are robustness entries, apart."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd

from chatparity.model import STRUCTURAL_CHECKS, ToolMode
from corpora import roundtrip, thinking_shapes
from corpora.conversations import CALL_IDS
from corpora.planning import PlanError
from harness.sources import load_source
from harness.sweep_config import SweepConfig
from oracle.client import GrammarVerdict
from reports.defect_judging import (
    NOT_A_STRING,
    NOT_JSON,
    contradictory_kwargs,
    departure,
    robustness_reason,
    same_meaning,
    truth_shape,
    written_in_grammar_order,
)
from reports.defect_repro import server_body
from reports.runs import Run, chunking_key, read_rows
from reports.server_layer import LAYER_COLUMNS, server_layer
from reports.show import Request, glob_literal
from reports.upstream import NOT_CHECKED, upstream_status
from templates.index import load_index

READ = [
    "case_id", "chunking", "session_id", "template", "family", "syntax", "mode", "tools", "conversation", "origin",
    "shape", "partial", "oracle_vs_truth", "oracle_structure_detail", "oracle_stream", "oracle_grammar", "reply",
    "truth", "oracle_reading",
    *(f"oracle_{check}" for check in STRUCTURAL_CHECKS if check != "problems_agree"),
]
"""The row columns the defects are found in and reported with."""
REASONING_NONE = "reasoning_format=none"
"""The part of a mode label that asks llama.cpp to leave a thought in the content."""
BROKEN = " OR ".join(f"oracle_{check} = 0" for check in STRUCTURAL_CHECKS if check != "problems_agree")
WHOLE = (
    "chunking = 'whole' AND partial = 0 AND oracle_reading IS NOT NULL AND ("
    "(oracle_vs_truth IS NOT NULL AND oracle_vs_truth != 'match') OR " + BROKEN + " OR "
    "(origin = 'roundtrip' AND oracle_grammar NOT IN ('', 'free', 'untriggered') "
    "AND oracle_grammar NOT LIKE 'accepts%') OR "
    "(truth IS NULL AND oracle_reading LIKE '{\"rejected\"%' AND oracle_grammar LIKE 'accepts%'))"
)
MAIN, ROBUSTNESS = "main", "robustness"
WHOLE_READ, STREAM = "whole", "stream"
GRAMMAR_KIND = "samples under a grammar that cannot write the template's reply"
PLAIN = ("single", "system")
"""The conversations of one question (with or without a system prompt)."""
UNORDERED = "arguments written in another order than llama.cpp's grammar makes a model write them"
ALWAYS_LLAMA_CPPS = "arguments_json"
"""The structural check whose break is llama.cpp's whatever the model wrote: arguments it returns must be JSON."""
MODELS_OWN = ("no meaning known, and the model may have written it so (a marker in its text, arguments off the "
              "schema): llama.cpp returns what was written")
PYTHON_TEXT = ("an object or list argument written as Python text, as the template prints it, which llama.cpp's "
               "grammar never lets a model write (it writes JSON there)")
REOPENED = ("the reply opens again the thought the generation prompt already opened, which the template never writes "
            "and a model prompted inside that thought does not")
UNCONFIRMED = ("a form neither the template nor llama.cpp's grammar is known to write (the template's rendering of "
               "the answer is not in the reply, and no grammar constrains it)")
STRUCTURE_KINDS = {
    "arguments_json": "returns arguments that are not JSON",
    "arguments_schema": "returns arguments the tool's schema does not allow",
    "no_leakage": "leaks a template marker",
    "parallel_order": "returns parallel calls incomplete or out of order",
}
STREAM_KINDS = {
    "retraction": "takes back what its stream showed",
    "marker_dropped": "shows a marker in its stream, then drops it",
    "silent_shrink": "cuts what its stream showed short without a diff",
    "empty_parse": "reads a longer prefix as an empty message after showing something",
    "error_mid_stream": "fails a partial parse of a reply it reads whole",
}
LEAD = 5
LEAD_STREAMS = 2
"""The entries to read first: the whole-read and stream entries on the most templates, then cases."""
ENTRY_COLUMNS = [
    "id", "part", "section", "family", "syntax", "kind", "construct", "reason", "cases", "templates", "template_names",
    "shapes", "case_id", "template", "mode", "kwargs", "shape", "reply", "session_id", "partial", "expected",
    "actual", "defect", "grammar", "writable", "request", "bos", "eos", "upstream", "lead",
]
"""An entry's columns: which, where, how many, its representative case and what reproduces it (`request`: the
session's Request, None where this checkout no longer plans it)."""
SERVER_COLUMNS = [*LAYER_COLUMNS, "request"]
"""A server-layer entry's columns (`reports.server_layer`) and its session's Request."""


@dataclass(frozen=True)
class DefectReport:
    """Every entry (whole reads, streams; main and robustness), and the cases behind them by template."""

    counts: pd.DataFrame
    clusters: pd.DataFrame
    server: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=SERVER_COLUMNS))

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON: the summary, every entry (its request as llama-server's body) and the counts."""
        entries = [
            {**entry, "request": None if entry["request"] is None else server_body(entry["request"],
                                                                                   entry["part"] == STREAM)}
            for entry in self.clusters.to_dict("records")
        ]
        server = []
        for entry in self.server.to_dict("records"):
            request = entry.pop("request")
            server.append({**entry, "requests": None if request is None else
                           {"plain": server_body(request, False), "stream": server_body(request, True)}})
        return {"summary": self.summary(), "entries": entries, "server_layer": server,
                "counts": self.counts.to_dict("records")}

    def summary(self) -> dict[str, int]:
        """Entries and cases per part and section (the console's line)."""
        found: dict[str, int] = {}
        for part in (WHOLE_READ, STREAM):
            for section in (MAIN, ROBUSTNESS):
                chosen = self.clusters[(self.clusters["part"] == part) & (self.clusters["section"] == section)]
                found[f"{part}_{section}_entries"] = len(chosen)
                found[f"{part}_{section}_cases"] = int(chosen["cases"].sum()) if len(chosen) else 0
        return found


def summary_line(summary: dict[str, int]) -> str:
    """llama.cpp's defects in one console line (its crashes are counted apart, with the errors)."""
    return (
        f"llama.cpp's own defects (against what the template means): whole reads {summary['whole_main_entries']} "
        f"({summary['whole_main_cases']} cases), streams {summary['stream_main_entries']} "
        f"({summary['stream_main_cases']} cases); robustness {summary['whole_robustness_entries']} whole, "
        f"{summary['stream_robustness_entries']} stream (oracle_defects.md)"
    )


def first_per_case(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per case, its 'whole' row first."""
    order = [chunking_key(chunking) for chunking in rows["chunking"]]
    return rows.assign(_order=order).sort_values(["case_id", "_order"], kind="stable").drop_duplicates(
        "case_id").drop(columns="_order")


class Plans:
    """The run's sessions planned again, one template at a time, for their requests and the template's own
    rendering of a reading."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.by_template: dict[str, dict[str, Any]] = {}

    def planned(self, template: str, session_id: str) -> Any:
        """The planned session (None where this checkout no longer plans it)."""
        if template not in self.by_template:
            stamp = self.run.stamp
            selection = stamp.get("selection") or {}
            config = SweepConfig(
                parser=str(stamp.get("parser", "reply")), profile=str(stamp.get("profile", "quick")), out="",
                templates=glob_literal(template), corpus=selection.get("corpus"),
                source=selection.get("source") or "catalog", oracle_version=stamp.get("llama_cpp_python_version"),
            )
            try:
                found = load_source(config.source).plan(config)
            except (PlanError, ValueError):
                found = []
            self.by_template[template] = {planned.session.id: planned for planned in found}
        return self.by_template[template].get(session_id)

    def request(self, template: str, session_id: str) -> Request | None:
        """The session's request (None where it is gone)."""
        planned = self.planned(template, session_id)
        if planned is None:
            return None
        return Request.of(planned.session)

    def in_grammar_order(self, row: dict[str, Any], truth: dict[str, Any]) -> bool:
        """Whether the reply writes its calls' arguments in the order llama.cpp's grammar makes a model write them
        (False where the session's tools are not known)."""
        request = self.request(row["template"], row["session_id"])
        return request is not None and written_in_grammar_order(row["reply"], truth, request.tools)

    def reads_prompt_tail(self, template: str, session_id: str, oracle: dict[str, Any],
                          truth: dict[str, Any]) -> bool:
        """Whether llama.cpp's reading is the truth but for reasoning that starts with the end of the generation
        prompt (text the prompt opens the reasoning with, which llama.cpp reads as the reasoning's start)."""
        planned = self.planned(template, session_id)
        reasoning, meant = oracle.get("reasoning_content") or "", truth.get("reasoning_content") or ""
        if planned is None or planned.session.prompt is None or not reasoning.endswith(meant):
            return False
        preface = reasoning[: len(reasoning) - len(meant)]
        return bool(preface.strip()) and planned.session.prompt.endswith(preface) and same_meaning(
            {**oracle, "reasoning_content": meant}, truth)

    def writes_answer_so(self, template: str, session_id: str, reply: str, truth: dict[str, Any]) -> bool:
        """Whether the template's own rendering of the truth's answer alone, after any thought it writes, is in the
        reply (False where the template cannot render it, or wraps it in markers the reply lacks, as Command R7B's
        `<|START_RESPONSE|>…<|END_RESPONSE|>`)."""
        planned = self.planned(template, session_id)
        content = truth.get("content") or ""
        if planned is None or not content or truth.get("tool_calls"):
            return False
        written = roundtrip.render_turn(planned, {"role": "assistant", "content": content}).text
        entry = load_index().get(template)
        if written is not None and entry is not None and entry.think_end:
            written = written.rpartition(entry.think_end)[2]
        return written is not None and bool(written.strip()) and written.strip() in reply

    def reopens_thought(self, template: str, session_id: str, reply: str) -> bool:
        """Whether the reply starts with the thinking tag its generation prompt already opened."""
        planned = self.planned(template, session_id)
        start = planned.entry.think_start if planned is not None else ""
        return bool(planned is not None and planned.opens_thought and start and reply.lstrip().startswith(start))

    def writes_alike(self, template: str, session_id: str, reply: str, oracle: dict[str, Any],
                     truth: dict[str, Any]) -> bool:
        """Whether the template writes llama.cpp's reading as the same reply (both readings are then the
        template's meaning)."""
        planned = self.planned(template, session_id)
        if planned is None or "rejected" in oracle or planned.session.prompt is None:
            return False
        calls = []
        for index, call in enumerate(oracle.get("tool_calls") or []):
            try:
                arguments = json.loads(call.get("arguments", ""))
            except ValueError:
                return False
            wanted = (truth.get("tool_calls") or [])[index:index + 1]
            call_id = call.get("id") or (wanted[0].get("id") if wanted else "") or CALL_IDS[index % len(CALL_IDS)]
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": call.get("name", ""), "arguments": arguments}})
        message: dict[str, Any] = {"role": "assistant", "content": oracle.get("content") or ""}
        if oracle.get("reasoning_content"):
            message["reasoning_content"] = oracle["reasoning_content"]
        if calls:
            message["tool_calls"] = calls
        return roundtrip.render_turn(planned, message).text == reply


def structure_departure(detail: str) -> tuple[str, str]:
    """The kind and construct of a structural check llama.cpp's reading breaks (`check: detail`), in the words of
    the departures from a truth where the two are one defect."""
    check, _, what = detail.partition(": ")
    what = re.sub(r" @\d+$", "", what)
    if check == "no_leakage":
        found = re.search(r"^(\S+?)(?:\[\d+\])?(?:\.\w+)? holds marker (.*)$", what)
        field = found.group(1) if found else "the reading"
        return STRUCTURE_KINDS[check], f"{found.group(2) if found else what} in {field}"
    if check == "arguments_json":
        return STRUCTURE_KINDS[check], NOT_JSON
    if check == "arguments_schema":
        found = re.search(r": (\S.*?) is not of type (.*)$", what)
        if found and found.group(1)[:1] in ("'", '"'):
            return "changes a call", NOT_A_STRING
        if found:
            return STRUCTURE_KINDS[check], f"a value where the schema wants {found.group(2).strip()}"
        return STRUCTURE_KINDS[check], re.sub(r"'[^']*'|\d+", "…", what)[:100]
    return STRUCTURE_KINDS.get(check, check), re.sub(r"'[^']*'|\d+", "…", what)[:100]


def whole_findings(run: Run, plans: Plans, sessions: pd.DataFrame) -> list[dict[str, Any]]:
    """Each finished case whose whole read llama.cpp gets wrong, once: its departure from the truth, else a
    structural check its reading breaks, else a grammar that cannot write the template's own reply."""
    rows = first_per_case(read_rows(run, READ, WHOLE))
    markers = marker_lists(rows["template"])
    found = []
    for row in rows.to_dict("records"):
        oracle = json.loads(row["oracle_reading"])
        truth = json.loads(row["truth"]) if isinstance(row["truth"], str) else None
        if REASONING_NONE in row["mode"].split("/") and truth is not None:
            oracle, truth = calls_only(oracle), calls_only(truth)
        verdict = GrammarVerdict.of_text(row["oracle_grammar"]) if row["oracle_grammar"] else None
        kind = construct = ""
        if truth is not None and not same_meaning(oracle, truth):
            if plans.writes_alike(row["template"], row["session_id"], row["reply"], oracle, truth) or \
                    plans.reads_prompt_tail(row["template"], row["session_id"], oracle, truth):
                continue
            kind, construct = departure(oracle, truth, markers[row["template"]], row["conversation"])
        elif row["oracle_structure_detail"] and any(row[f"oracle_{check}"] == 0 for check in STRUCTURE_KINDS):
            if marker_in_arguments(row["oracle_structure_detail"]):
                continue
            kind, construct = structure_departure(row["oracle_structure_detail"])
        elif truth is not None and verdict is not None and not verdict.writable and plans.in_grammar_order(row, truth):
            kind, construct = GRAMMAR_KIND, f"{verdict.verdict} a reply of {truth_shape(truth)}"
        elif truth is None and "rejected" in oracle and grammar_writes_all(row["reply"], verdict, row["template"]):
            kind, construct = "rejects the reply", "a reply with calls"
        if not kind:
            continue
        why = UNORDERED if unordered(row, truth, plans) else ""
        if not why and truth is None and "rejected" not in oracle and \
                not row["oracle_structure_detail"].startswith(f"{ALWAYS_LLAMA_CPPS}:"):
            why = MODELS_OWN
        if not why and verdict is not None and not verdict.writable and python_text_values(row["reply"], truth):
            why = PYTHON_TEXT
        if not why and plans.reopens_thought(row["template"], row["session_id"], row["reply"]):
            why = REOPENED
        if not why and truth is not None and row["origin"] == thinking_shapes.ORIGIN and \
                (verdict is None or verdict.verdict != "accepts") and \
                not plans.writes_answer_so(row["template"], row["session_id"], row["reply"], truth):
            why = UNCONFIRMED
        found.append(finding(row, sessions, WHOLE_READ, kind, construct, truth, oracle, None, why))
    return request_refusals(plain_refusals(found), refusing_modes(run))


def refusing_modes(run: Run) -> set[tuple[str, str]]:
    """The templates and modes where llama.cpp rejects every finished reply whose meaning is known, replies with
    calls and without alike: the request, not the reply, is what it refuses."""
    rows = read_rows(run, ["template", "mode", "oracle_reading", "truth"],
                     "chunking = 'whole' AND partial = 0 AND truth IS NOT NULL AND oracle_reading IS NOT NULL")
    seen: dict[tuple[str, str], set[tuple[bool, bool]]] = {}
    for template, mode, oracle, truth in zip(rows["template"], rows["mode"], rows["oracle_reading"], rows["truth"]):
        calls = bool(json.loads(truth).get("tool_calls"))
        seen.setdefault((template, mode), set()).add((calls, oracle.startswith('{"rejected"')))
    return {key for key, kinds in seen.items() if kinds == {(True, True), (False, True)}}


def request_refusals(found: list[dict[str, Any]], refusing: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """The findings with a refusal in a mode that refuses every reply (`refusing_modes`) named after the mode's
    request: every reply under reasoning_format none, or every reply to the request."""
    for item in found:
        if item["kind"] == "rejects the reply" and (item["template"], item["mode"]) in refusing:
            item["construct"] = ("every reply, under reasoning_format none"
                                 if REASONING_NONE in item["mode"].split("/") else "every reply to the request")
    return found


def grammar_writes_all(reply: str, verdict: GrammarVerdict | None, template: str) -> bool:
    """Whether llama.cpp's grammar for the request accepts the reply and constrains all of it but a thought: what
    comes before the point it constrains from is whitespace and the template's thinking tags and thought."""
    if verdict is None or verdict.verdict != "accepts" or verdict.start is None:
        return False
    entry = load_index().get(template)
    before = reply[:verdict.start]
    if entry is not None and entry.think_end and entry.think_end in before:
        before = before[before.rindex(entry.think_end) + len(entry.think_end):]
    return not before.strip()


def calls_only(reading: dict[str, Any]) -> dict[str, Any]:
    """A reading (as JSON) with its text left out, as reasoning_format none judges it: a thought stays in the
    content as written, where a truth sets it apart, so only a refusal and the calls say what was meant."""
    if "rejected" in reading:
        return reading
    return {"content": "", "reasoning_content": "", "tool_calls": reading.get("tool_calls") or []}


def python_text_values(reply: str, truth: dict[str, Any] | None) -> bool:
    """Whether the reply writes a call's object or list argument as Python's text of it (`{'title': 'Beach'}`, what
    jinja writes for a value a template prints as it is) rather than as JSON."""
    for call in (truth or {}).get("tool_calls") or []:
        try:
            arguments = json.loads(call.get("arguments") or "")
        except ValueError:
            continue
        values = arguments.values() if isinstance(arguments, dict) else ()
        if any(isinstance(value, (dict, list)) and value and str(value) in reply for value in values):
            return True
    return False


def marker_in_arguments(detail: str) -> bool:
    """Whether llama.cpp's only broken structural check is a marker inside a call's arguments: text of an
    argument's value, as the reply wrote it, not a leak."""
    check, _, what = detail.partition(": ")
    return check == "no_leakage" and what.startswith("tool_calls[")


def plain_refusals(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The findings with a refusal after another conversation (a tool result, typed tools, …) named as in the
    single question where the family refuses such replies, meant as the truth says, there too (the conversation is
    then not the cause)."""
    plain = {(item["family"], item["section"], departure({"rejected": ""}, item["expected"], ())[1])
             for item in found
             if item["kind"] == "rejects the reply" and item["expected"] and item["conversation"] in PLAIN}
    for item in found:
        if item["kind"] == "rejects the reply" and item["expected"] and item["conversation"] not in PLAIN:
            construct = departure({"rejected": ""}, item["expected"], ())[1]
            if (item["family"], item["section"], construct) in plain:
                item["construct"] = construct
    return found


def unordered(row: dict[str, Any], truth: dict[str, Any] | None, plans: Plans) -> bool:
    """Whether a reply with calls, read under a grammar, writes their arguments in another order than the grammar
    makes a model write them (a form the grammar never produces)."""
    if truth is None or not truth.get("tool_calls") or row["oracle_grammar"] in ("", "free"):
        return False
    return plans.request(row["template"], row["session_id"]) is not None and not plans.in_grammar_order(row, truth)


def marker_lists(templates: pd.Series) -> dict[str, tuple[str, ...]]:
    """Each template's markers and thinking tags, longest first."""
    index = load_index()
    found = {}
    for name in set(templates):
        entry = index.get(name)
        names = [*(entry.markers if entry else ()), *((entry.think_start, entry.think_end) if entry else ())]
        found[name] = tuple(sorted({marker for marker in names if marker}, key=len, reverse=True))
    return found


def stream_construct(defect: dict[str, Any]) -> str:
    """What breaks in a stream defect, without names of tools or arguments."""
    field = re.sub(r"\[\d+\]", "[]", defect.get("field") or "")
    if defect["kind"] == "marker_dropped":
        return f"{defect['marker']} in {field or 'the message'}"
    if defect["kind"] == "empty_parse":
        shown = defect["shown"]
        held = truth_shape(shown)
        return f"after showing {held}" + (" (at the finished read)" if defect.get("finish") else "")
    if defect["kind"] == "error_mid_stream":
        return re.sub(r"'[^']*'|\d+", "…", (defect.get("error") or "").splitlines()[0])[:100]
    error = (defect.get("error") or "").splitlines()[0] if defect.get("error") else ""
    head = re.sub(r"'.*'", "'…'", error)[:80]
    return f"{field or 'the message'}" + (f" ({head})" if head else "") + (" at the finished read" if
                                                                           defect.get("finish") else "")


def stream_findings(run: Run, plans: Plans, sessions: pd.DataFrame, judged: set[str]) -> list[dict[str, Any]]:
    """Each case whose stream llama.cpp breaks, once (under its most severe defect), but for the partial parses
    that fail (`empty_parse`, `error_mid_stream`) in a case whose whole read is an entry already (`judged`: the
    same root cause); a cut reply only where no finished reply of its session starts with it (its stream is
    theirs)."""
    rows = first_per_case(read_rows(run, READ, "oracle_stream != ''"))
    finished = read_rows(run, ["session_id", "reply"], "chunking = 'whole' AND partial = 0")
    texts: dict[str, list[str]] = {}
    for session_id, reply in zip(finished["session_id"], finished["reply"]):
        texts.setdefault(session_id, []).append(reply)
    found = []
    for row in rows.to_dict("records"):
        if row["partial"] and any(text.startswith(row["reply"]) for text in texts.get(row["session_id"], ())):
            continue
        defect = json.loads(row["oracle_stream"])[0]
        if row["case_id"] in judged and defect["kind"] in ("empty_parse", "error_mid_stream"):
            continue
        truth = json.loads(row["truth"]) if isinstance(row["truth"], str) else None
        kind, construct = STREAM_KINDS[defect["kind"]], stream_construct(defect)
        found.append(finding(row, sessions, STREAM, kind, construct, truth, defect["later"], defect,
                             UNORDERED if unordered(row, truth, plans) else ""))
    return found


def finding(row: dict[str, Any], sessions: pd.DataFrame, part: str, kind: str, construct: str,
            truth: dict[str, Any] | None, actual: Any, defect: dict[str, Any] | None, why: str = "") -> dict[str, Any]:
    """A case's finding: its section and why (`why`: a reason found before), root cause, and what the report
    shows of it."""
    session = sessions.loc[row["session_id"]] if row["session_id"] in sessions.index else None
    kwargs = json.loads(session["kwargs"]) if session is not None else {}
    thinking = bool(session["thinking"]) if session is not None else row["mode"].startswith("think")
    contradiction = contradictory_kwargs(thinking, kwargs)
    parallel = session is None or ToolMode(session["tools"]).parallel_tool_calls
    reason = why or past_end_of_turn(row["template"], row["reply"]) or robustness_reason(
        row["origin"], row["shape"], bool(row["partial"]), truth is not None, row["oracle_grammar"], contradiction,
        parallel)
    return {
        **{name: row[name] for name in ("case_id", "session_id", "template", "family", "syntax", "mode", "shape",
                                         "origin", "conversation", "reply", "partial")},
        "kwargs": json.dumps(kwargs, sort_keys=True),
        "part": part, "section": ROBUSTNESS if reason else MAIN, "reason": reason, "kind": kind,
        "construct": construct, "expected": truth, "actual": actual, "grammar": row["oracle_grammar"],
        "defect": defect,
    }


def past_end_of_turn(template: str, reply: str) -> str:
    """Why a reply is a robustness finding when it goes on past the template's end-of-turn marker, where a served
    model stops ('' where it does not)."""
    entry = load_index().get(template)
    thinking_tags = (entry.think_start, entry.think_end) if entry else ()
    for marker in [marker for marker in entry.end_of_turn if marker not in thinking_tags] if entry else ():
        at = reply.find(marker)
        if at != -1 and reply[at + len(marker):].strip():
            return f"text after the end of the turn ({marker}, where a served model stops)"
    return ""


def representative(group: pd.DataFrame) -> pd.Series:
    """The case a group is shown by: of its most common template and shape, in a plain mode (fewest kwargs, the
    single conversation), the shortest reply."""
    templates, shapes = Counter(group["template"]), Counter(group["shape"])
    order = group.assign(
        _template=[-templates[name] for name in group["template"]],
        _shape=[-shapes[name] for name in group["shape"]],
        _kwargs=[len(json.loads(kwargs)) for kwargs in group["kwargs"]],
        _single=[conversation != "single" for conversation in group["conversation"]],
        _length=[len(reply) for reply in group["reply"]],
    ).sort_values(["_template", "template", "_shape", "_kwargs", "_single", "_length", "shape", "case_id"],
                  kind="stable")
    return order.iloc[0]


def grouped(findings: list[dict[str, Any]], run: Run, plans: Plans) -> pd.DataFrame:
    """One entry per part, section, llama.cpp parser (the format's syntax: the families that share it share the
    code at fault), kind and construct, with its counts and representative case."""
    if not findings:
        return pd.DataFrame(columns=ENTRY_COLUMNS)
    frame = pd.DataFrame(findings)
    index = load_index()
    keys = ["part", "section", "syntax", "kind", "construct"]
    entries = []
    for key, group in frame.groupby(keys, sort=True):
        shown = representative(group)
        families = sorted(set(group["family"]), key=lambda family: (family != shown["family"], family))
        entry = index.get(shown["template"])
        request = plans.request(shown["template"], shown["session_id"])
        reasons = Counter(reason for reason in group["reason"] if reason)
        verdict = GrammarVerdict.of_text(shown["grammar"]) if shown["grammar"] else None
        entries.append({
            **dict(zip(keys, key)),
            "family": ", ".join(families),
            "reason": reasons.most_common(1)[0][0] if reasons else "",
            "cases": group["case_id"].nunique(),
            "templates": group["template"].nunique(),
            "template_names": ", ".join(sorted(set(group["template"]))),
            "shapes": ", ".join(sorted(set(group["shape"]))),
            **{name: shown[name] for name in ("case_id", "template", "mode", "kwargs", "shape", "reply",
                                              "session_id", "partial")},
            "expected": shown["expected"], "actual": shown["actual"], "defect": shown["defect"],
            "grammar": shown["grammar"], "writable": None if verdict is None else verdict.writable,
            "request": request, "bos": entry.bos if entry else "", "eos": entry.eos if entry else "",
            "upstream": next((status for status in (upstream_status(family, key[3], key[4]) for family in families)
                              if not status.startswith(NOT_CHECKED)), upstream_status(families[0], key[3], key[4])),
        })
    table = pd.DataFrame(entries)
    table["_part"] = [(section == ROBUSTNESS, part == STREAM) for part, section in zip(table["part"], table["section"])]
    table["_fixed"] = [status.startswith("fixed") for status in table["upstream"]]
    table["_no_request"] = table["request"].isna()
    table = table.sort_values(["_part", "_fixed", "_no_request", "templates", "cases", "family", "kind", "construct"],
                              ascending=[True, True, True, False, False, True, True, True], kind="stable")
    table = table.drop(columns=["_part", "_fixed", "_no_request"]).reset_index(drop=True)
    prefixes = {(WHOLE_READ, MAIN): "W", (STREAM, MAIN): "S", (WHOLE_READ, ROBUSTNESS): "RW",
                (STREAM, ROBUSTNESS): "RS"}
    numbers: Counter[tuple[str, str]] = Counter()
    ids = []
    for part, section in zip(table["part"], table["section"]):
        numbers[(part, section)] += 1
        ids.append(f"{prefixes[(part, section)]}{numbers[(part, section)]}")
    table["id"] = ids
    main = table[(table["section"] == MAIN) & ~table["upstream"].str.startswith("fixed")]
    ranked = main.assign(_reproducible=main["request"].notna()).sort_values(
        ["_reproducible", "templates", "cases"], ascending=False, kind="stable")
    leads = [*ranked[ranked["part"] == WHOLE_READ].head(LEAD)["id"], *ranked[ranked["part"] == STREAM].head(
        LEAD_STREAMS)["id"]]
    table["lead"] = table["id"].isin(set(leads))
    return table[ENTRY_COLUMNS]


def oracle_defects(run: Run, requests: bool = True) -> DefectReport:
    """Every llama.cpp defect entry of a run and the cases behind them by template (`requests`: plan the
    sessions again for their requests and the template's rendering of llama.cpp's readings)."""
    plans = Plans(run) if requests else NoPlans(run)
    sessions = run.sessions.set_index("session_id")
    whole = whole_findings(run, plans, sessions)
    findings = whole + stream_findings(run, plans, sessions, {found["case_id"] for found in whole})
    clusters = grouped(findings, run, plans)
    if findings:
        frame = pd.DataFrame(findings)
        counts = (frame.groupby(["part", "section", "family", "kind", "construct", "template"]).size()
                  .rename("cases").reset_index())
    else:
        counts = pd.DataFrame(columns=["part", "section", "family", "kind", "construct", "template", "cases"])
    layer = server_layer(run)
    layer["request"] = [plans.request(template, session_id)
                        for template, session_id in zip(layer["template"], layer["session_id"])]
    return DefectReport(counts=counts, clusters=clusters, server=layer)


class NoPlans(Plans):
    """No session planned again: no requests, no rendering."""

    def planned(self, template: str, session_id: str) -> Any:
        """None: nothing is planned."""
        return None
