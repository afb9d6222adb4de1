"""oracle_defects.md: llama.cpp's defects as entries a maintainer can file as they are, the few to read first at
the top; whole reads and streams apart, robustness entries last."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd

from reports.defect_repro import (
    body_json,
    grammar_case,
    server_body,
    server_command,
    stream_case,
    structure_case,
    whole_case,
)
from reports.oracle_defects import (
    GRAMMAR_KIND,
    MAIN,
    ROBUSTNESS,
    STREAM,
    STRUCTURE_KINDS,
    WHOLE_READ,
    DefectReport,
)
from reports.runs import Run
from reports.show import show_command
from reports.tables import markdown_table
from templates.index import load_index

LEAK_KIND = STRUCTURE_KINDS["no_leakage"]

METHOD = """\
How the entries are judged. A finished reply counts against llama.cpp only where its meaning comes from the
template: the template's own rendering of the message (a round trip), a thought placed as the template places it,
or a form a model sampling under llama.cpp's own grammar for the request can write (the oracle's `grammar` op
runs the grammar llama-server builds, lazy triggers and thoughts included, over the reply). llama.cpp's whole read
is compared with that meaning with whitespace at the edges of the text left aside (the prompt owns it), call
arguments as parsed JSON, and call ids only where the template wrote one; a reading the template renders as the
same reply is as right as the meaning. Requests whose kwargs contradict their thinking switch, calls to tools the
request does not offer, arguments the schema does not allow, corrupted call text, fuzz and forms neither the
template nor the grammar writes are robustness entries, ranked last. Streams are llama-server's own snapshots of
every prefix (`update_chat_msg`) and the diffs it sends (`compute_diffs`). Each case is counted once per part,
under one entry: llama.cpp's parser for the format × the failing construct (the families sharing that parser named
together), shown by a case of its most common template and shape in a plain mode. Cut replies are judged only as streams."""


SERVER_METHOD = """\
Where llama-server itself, fed each reply token for token by a tape model, answers otherwise than llama.cpp's chat
code reads the same reply, by a rule of the server's own layer (request handling, the streaming diff, the final
answer): each rule is one of llama-server's policies (`harness/server_expectations/policies.toml`), recognized from
the readings. A model must write the reply for a real server to show it; the requests are what the tape was
sent, without the tape's placement in the last user message."""


def fence(text: str, language: str = "") -> str:
    """A fenced markdown code block that survives backticks inside the text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def pretty(value: Any) -> str:
    """A reading as indented JSON."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def counted(number: int, noun: str) -> str:
    """A count with its noun, plural unless one."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def title(entry: dict[str, Any]) -> str:
    """An entry's one-line title."""
    return f"{entry['family']}: llama.cpp {entry['kind']}: {entry['construct']}"


def writable(entry: dict[str, Any]) -> str:
    """Whether a model under llama.cpp's grammar can write the entry's reply, in words."""
    grammar = entry["grammar"] or "not asked"
    if entry["writable"] is None:
        return f"not known (grammar {grammar})"
    return f"{'yes' if entry['writable'] else 'no'} (grammar {grammar})"


def test_case(entry: dict[str, Any], commit: str) -> str:
    """The entry's test-chat.cpp-style case."""
    request, reply = entry["request"], entry["reply"]
    name = f"{title(entry)} (chatparity {entry['case_id']}, llama.cpp {commit})"
    if entry["part"] == STREAM:
        return stream_case(name, entry["template"], entry["bos"], entry["eos"], request, reply, entry["defect"])
    if entry["kind"] == GRAMMAR_KIND:
        start = int(entry["grammar"].rpartition(" from ")[2]) if " from " in entry["grammar"] else 0
        return grammar_case(name, entry["template"], entry["bos"], entry["eos"], request, reply, start)
    if entry["expected"] is None:
        marker = re.match(r"'(.*)' in \w+$", entry["construct"]) if entry["kind"] == LEAK_KIND else None
        return structure_case(name, entry["template"], entry["bos"], entry["eos"], request, reply,
                              marker.group(1) if marker else "")
    expected = dict(entry["expected"])
    actual_calls = (entry["actual"] or {}).get("tool_calls") or []
    expected["tool_calls"] = [
        {**call, "id": call.get("id") or (actual_calls[index].get("id", "") if index < len(actual_calls) else "")}
        for index, call in enumerate(expected.get("tool_calls") or [])
    ]
    return whole_case(name, entry["template"], entry["bos"], entry["eos"], request, reply, expected)


def whole_parts(entry: dict[str, Any]) -> list[str]:
    """What llama.cpp should have read and what it read."""
    expected = entry["expected"]
    return [
        "Expected (the message the template wrote):", "",
        fence(pretty(expected), "json") if expected is not None else "(the corpus knows no meaning for this reply)",
        "", "Actual (llama.cpp's read of the finished reply):", "", fence(pretty(entry["actual"]), "json"),
    ]


def stream_parts(entry: dict[str, Any]) -> list[str]:
    """What llama-server showed, what it read later, and what a client ends up with."""
    defect, reply = entry["defect"], entry["reply"]
    at = "the finished reply" if defect.get("finish") else f"the prefix of {defect['at']} code points"
    parts = [
        f"llama-server showed, at the prefix of {defect['shown_at']} code points:", "",
        fence(reply[:defect["shown_at"]]), "", fence(pretty(defect["shown"]), "json"), "",
        f"and later read, at {at}:", "", fence(reply[:defect["at"]]), "", fence(pretty(defect["later"]), "json"),
    ]
    if defect.get("error"):
        parts += ["", "compute_diffs threw, so llama-server ends the stream:", "", fence(defect["error"])]
    if defect.get("client") is not None:
        parts += ["", "A client that applies llama-server's diffs ends up with:", "",
                  fence(pretty(defect["client"]), "json")]
    return parts


def entry_parts(entry: dict[str, Any], run: Run) -> list[str]:
    """One entry in full: counts, grammar, upstream, how llama-server is run, the reply, expected and actual, the
    test-chat.cpp case and the replay command."""
    commit = str(run.stamp.get("llama_cpp_commit", "?"))
    cut = "a cut reply (partial), judged as a stream" if entry["partial"] else "a finished reply"
    parts = [
        f"### {entry['id']}. {title(entry)}", "",
        (f"- {counted(entry['cases'], 'case')} on {counted(entry['templates'], 'template')} "
         f"({entry['template_names']}); shapes {entry['shapes']}"),
        *([f"- robustness: {entry['reason']}"] if entry["section"] == ROBUSTNESS else []),
        f"- can a model sampling under llama.cpp's grammar write the reply: {writable(entry)}",
        f"- llama.cpp `{commit}`; upstream: {entry['upstream']}",
        (f"- shown by `models/templates/{entry['template']}`, mode `{entry['mode']}` (kwargs "
        f"`{entry['kwargs']}`), shape `{entry['shape']}`, {cut}; `{show_command(entry['case_id'], run.directory)}`"),
        "",
    ]
    if entry["request"] is None:
        parts += ["(this checkout no longer plans the session: no request, no test-chat.cpp case)", ""]
    else:
        parts += [
            "llama-server:", "", fence(server_command(entry["template"], entry["bos"], entry["eos"]), "sh"), "",
            "Request (POST /v1/chat/completions):", "",
            fence(body_json(server_body(entry["request"], entry["part"] == STREAM)), "json"), "",
        ]
    parts += ["The model's reply:", "", fence(entry["reply"]), ""]
    parts += stream_parts(entry) if entry["part"] == STREAM else whole_parts(entry)
    if entry["request"] is not None:
        parts += ["", "test-chat.cpp case:", "", fence(test_case(entry, commit), "cpp")]
    return parts + [""]


def server_parts(entry: dict[str, Any], run: Run) -> list[str]:
    """One server-layer entry in full: the policy and where the server does it, the case, both requests, the
    reply, and what llama.cpp's chat code and llama-server answer."""
    answer = "the non-stream answer" if entry["chunking"] == "whole" else f"the stream's end ({entry['chunking']})"
    parts = [
        f"### {entry['id']}. {entry['family']}: llama-server {entry['policy']}", "",
        (f"- {counted(entry['cases'], 'case')} on {counted(entry['templates'], 'template')} "
         f"({entry['template_names']}), llama.cpp parser `{entry['syntax']}`; chunkings {entry['chunkings']}"),
        f"- {entry['reason']}",
        f"- where: {entry['documented']}",
        (f"- shown by `models/templates/{entry['template']}`, mode `{entry['mode']}`, shape `{entry['shape']}`; "
         f"`{show_command(entry['case_id'], run.directory)}`"), "",
    ]
    if entry["request"] is None:
        parts += ["(this checkout no longer plans the session: no request)", ""]
    else:
        index = load_index().get(entry["template"])
        parts += [
            "llama-server:", "",
            fence(server_command(entry["template"], index.bos if index else "", index.eos if index else ""), "sh"),
            "", 'Request (POST /v1/chat/completions; with `"stream": true` for the streamed answer):', "",
            fence(body_json(server_body(entry["request"], False)), "json"), "",
        ]
    return parts + [
        "The model's reply:", "", fence(entry["reply"]), "",
        "llama.cpp's chat code reads (common_chat_parse, the oracle):", "", fence(pretty(entry["oracle"]), "json"), "",
        f"llama-server answers, {answer}:", "", fence(pretty(entry["server"]), "json"), "",
    ]


def table(entries: pd.DataFrame) -> str:
    """The entries as one markdown table."""
    shown = entries[["id", "family", "kind", "construct", "templates", "cases", "writable", "upstream"]]
    states = [next((word for word in ("open", "fixed") if status.startswith(word)), "not checked")
              for status in shown["upstream"]]
    grammar = ["not asked" if pd.isna(value) else "yes" if value else "no"
               for value in shown["writable"]]
    return markdown_table(shown.assign(upstream=states, writable=grammar).rename(
        columns={"writable": "llama.cpp's grammar writes it"}), 60)


def defects_markdown(report: DefectReport, run: Run) -> str:
    """The report: method, counts, the entries to read first, then each part's entries."""
    entries = report.clusters
    commit = run.stamp.get("llama_cpp_commit", "?")
    version = run.stamp.get("llama_cpp_python_version", "?")
    summary = report.summary()
    parts = [
        "# llama.cpp's defects, ready to file", "",
        (f"llama.cpp commit `{commit}` (as vendored by llama-cpp-python {version}), reasoning format `deepseek`. "
        f"Whole reads: {summary['whole_main_entries']} entries ({summary['whole_main_cases']} cases); streams: "
        f"{summary['stream_main_entries']} entries ({summary['stream_main_cases']} cases); robustness: "
        f"{summary['whole_robustness_entries']} whole-read entries ({summary['whole_robustness_cases']} cases), "
        f"{summary['stream_robustness_entries']} stream entries ({summary['stream_robustness_cases']} cases)."),
        "", METHOD, "",
        "## Read first", "",
        ("Real (the template or llama.cpp's grammar says what the reply means), on the most templates, each with a "
        "request and a test-chat.cpp case. Where llama.cpp's grammar does not write the reply (`no`), the reply is "
        "the template's own and a model constrained by that grammar cannot write it: the grammar is at fault "
        "too."), "",
        table(entries[entries["lead"]]) if len(entries) else "(none)", "",
    ]
    sections = (
        (WHOLE_READ, MAIN, "Whole reads: finished replies llama.cpp reads otherwise than their template meant"),
        (STREAM, MAIN, "Streams: llama-server's snapshots of replies the template or the grammar writes"),
        (WHOLE_READ, ROBUSTNESS, "Robustness, whole reads: replies the template does not write"),
        (STREAM, ROBUSTNESS, "Robustness, streams: replies the template does not write"),
    )
    for part, section, heading in sections:
        chosen = entries[(entries["part"] == part) & (entries["section"] == section)]
        parts += [f"## {heading} ({len(chosen)} entries, {int(chosen['cases'].sum()) if len(chosen) else 0} cases)",
                  "", table(chosen) if len(chosen) else "(none)", ""]
        for entry in chosen.to_dict("records"):
            parts += entry_parts(entry, run)
    if len(report.server):
        layer = report.server
        parts += [f"## llama-server's own layer ({len(layer)} entries, {int(layer['cases'].sum())} cases)", "",
                  SERVER_METHOD, "",
                  markdown_table(layer[["id", "family", "policy", "syntax", "templates", "cases"]], 60), ""]
        for entry in layer.to_dict("records"):
            parts += server_parts(entry, run)
    return "\n".join(parts).rstrip("\n") + "\n"
