"""One case of a run, shown whole: its session's request, the reply, both readings and how to replay it."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from chatparity.model import STRUCTURAL_CHECKS, Session
from corpora.planning import PlanError
from harness.profiles import rules_of
from harness.sources import load_source
from harness.sweep_config import SweepConfig
from reports.runs import Run, RunError, chunking_key
from templates.pins import DEFAULT_VERSION

DEFAULT_REPLAY_DIR = "/tmp/chatparity-replay"


@dataclass(frozen=True)
class Request:
    """What the session sent with the reply: messages, tools and the chat settings."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    tool_choice: str
    parallel_tool_calls: bool
    enable_thinking: bool
    chat_template_kwargs: dict[str, Any]
    reasoning_format: str

    @classmethod
    def of(cls, session: Session) -> Request:
        """The request a session sends."""
        return cls(list(session.messages), session.tools, session.tool_choice, session.parallel_tool_calls,
                   session.enable_thinking, session.chat_template_kwargs, session.reasoning_format)

    def to_json(self) -> dict[str, Any]:
        """The request as the parser under test receives it: the fields of the session `open` carries (and the
        Python protocol's session has), without the template, the prompt and the clock."""
        return {
            "messages": self.messages,
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "enable_thinking": self.enable_thinking,
            "chat_template_kwargs": self.chat_template_kwargs,
            "reasoning_format": self.reasoning_format,
        }


def glob_literal(text: str) -> str:
    """A glob that matches exactly `text` (fnmatch's special characters bracketed)."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def case_rows(run: Run, case_id: str) -> pd.DataFrame:
    """The rows of one case (every chunking), 'whole' first; a RunError naming near ids when there is none."""
    rows = run.rows[run.rows["case_id"] == case_id]
    if rows.empty:
        near = sorted({case for case in run.rows["case_id"] if case.startswith(case_id[:4])})[:5]
        hint = f"; ids starting alike: {', '.join(near)}" if near else ""
        raise RunError(f"{run.directory}: no case {case_id!r} in this run{hint}")
    order = [chunking_key(chunking) for chunking in rows["chunking"]]
    return rows.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order")


def session_requests(run: Run, template: str, mode: str) -> dict[str, Request]:
    """The requests of a template's sessions in a mode, planned again from the run's source, by session id
    (none when they are gone)."""
    selection = run.stamp.get("selection") or {}
    config = SweepConfig(
        parser=run.parser_spec or "reply",
        profile=str(run.stamp.get("profile", "quick")),
        out="",
        templates=glob_literal(template),
        mode=glob_literal(mode),
        corpus=selection.get("corpus"),
        source=selection.get("source") or "catalog",
        oracle_version=run.stamp.get("llama_cpp_python_version"),
    )
    try:
        planned_sessions = load_source(config.source).plan(config)
    except (PlanError, ValueError):
        return {}
    requests: dict[str, Request] = {}
    for planned in planned_sessions:
        requests.setdefault(planned.session.id, Request.of(planned.session))
    return requests


def session_request(run: Run, row: pd.Series) -> Request | None:
    """The request of the row's session, planned again from the run's source (None when it is gone)."""
    return session_requests(run, str(row["template"]), str(row["mode"])).get(row["session_id"])


def replay_command(run: Run, row: pd.Series, out: str = DEFAULT_REPLAY_DIR) -> str:
    """The command that sweeps just this case again (same parser, profile, source and oracle) and shows it."""
    stamp = run.stamp
    selection = stamp.get("selection") or {}
    spec = run.parser_spec or "reply"
    words = ["chatparity", "sweep", "--parser", spec]
    words += ["--profile", str(stamp.get("profile", "quick"))]
    words += ["--templates", glob_literal(str(row["template"])), "--mode", glob_literal(str(row["mode"]))]
    words += ["--case", str(row["case_id"])]
    if selection.get("corpus"):
        words += ["--corpus", str(selection["corpus"])]
    if selection.get("source") and selection["source"] != "catalog":
        words += ["--source", str(selection["source"])]
    chunkings = [str(name) for name in stamp.get("chunkings") or []]
    every_reply = stamp.get("chunking_rules") == "every reply"
    if chunkings and (every_reply or tuple(chunkings) != rules_of(str(stamp.get("profile", "quick"))).chunkings):
        words += ["--chunking", ",".join(chunkings)] + ([] if every_reply else ["--keep-profile-rules"])
    version = stamp.get("llama_cpp_python_version")
    if version and version != DEFAULT_VERSION:
        words += ["--oracle-version", str(version)]
    if stamp.get("expectations") and spec != "reply":
        words += ["--expectations", str(stamp["expectations"])]
    target = f"{out}/{row['case_id']}"
    words += ["--out", target]
    return f"{shlex.join(words)} ; {show_command(str(row['case_id']), target)}"


def show_command(case_id: str, run_dir: Path | str) -> str:
    """The command that shows a case of a run."""
    return f"chatparity show {case_id} {shlex.quote(str(run_dir))}"


def pretty(text: Any) -> str:
    """A stored JSON text indented for reading ('(none)' when missing)."""
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return "(none)"
    return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)


def checks(row: pd.Series) -> str:
    """The stream checks of a streamed row, e.g. 'consistent ok, clean BROKEN' ('' for a whole read)."""
    names = ("consistent", "monotonic", "clean", "snapshot_parity")
    if pd.isna(row["consistent"]):
        return ""
    return ", ".join(f"{name} {'ok' if row[name] == 1 else 'BROKEN'}" for name in names)


def structure(row: pd.Series) -> str:
    """The structural checks a row's readings break, with their details when stored ('' when none)."""
    broken = []
    for side, prefix in (("parser", ""), ("llama.cpp", "oracle_")):
        names = [check for check in STRUCTURAL_CHECKS if row.get(f"{prefix}{check}") == 0]
        if names:
            detail = row.get(f"{prefix}structure_detail")
            broken.append(f"{side} breaks {detail if isinstance(detail, str) and detail else ', '.join(names)}")
    return "; ".join(broken)


def row_line(row: pd.Series) -> str:
    """One chunking's outcome on a line."""
    outcome = f"{row['outcome']}:{row['kind']}" if row["kind"] else str(row["outcome"])
    parts = [f"  {row['chunking']:<10} {outcome}"]
    if row["detail"] or row["error"]:
        parts.append(str(row["detail"] or row["error"]))
    if checks(row):
        parts.append(f"[{checks(row)}]")
    if row["stream_detail"]:
        parts.append(str(row["stream_detail"]))
    if structure(row):
        parts.append(f"[{structure(row)}]")
    return "  ".join(parts)


def shown_row(rows: pd.DataFrame) -> pd.Series:
    """The row whose readings are shown: the first that does not match, else the first."""
    failing = rows[rows["outcome"] != "match"]
    return (failing if not failing.empty else rows).iloc[0]


def request_lines(request: Request | None) -> list[str]:
    """The request as text: settings, messages indented, one compact line per tool."""
    if request is None:
        return ["  (the session is no longer planned by this checkout: its template, mode or corpus changed)"]
    body = request.to_json()
    settings = {key: value for key, value in body.items() if key not in ("messages", "tools")}
    lines = [f"  {json.dumps(settings, ensure_ascii=False)}", "  messages:"]
    lines += ["    " + json.dumps(message, ensure_ascii=False) for message in request.messages]
    lines.append(f"  tools ({len(request.tools)}):")
    lines += ["    " + json.dumps(tool, ensure_ascii=False) for tool in request.tools]
    return lines


def describe(run: Run, case_id: str, request: Request | None) -> str:
    """The whole case as text."""
    rows = case_rows(run, case_id)
    first = rows.iloc[0]
    row = shown_row(rows)
    stamp = run.stamp
    session = run.sessions[run.sessions["session_id"] == first["session_id"]]
    kwargs = session.iloc[0]["kwargs"] if not session.empty else "{}"
    lines = [
        f"case {case_id} of run {run.directory}",
        (
            f"parser       {stamp.get('parser', '?')}@{stamp.get('parser_revision', '?')} vs llama.cpp "
            f"{str(stamp.get('llama_cpp_commit', '?'))[:12]} (llama-cpp-python "
            f"{stamp.get('llama_cpp_python_version', '?')})"
        ),
        f"template     {first['template']} (family {first['family']}, syntax {first['syntax']})",
        f"mode         {first['mode']} (kwargs {kwargs}; conversation {first['conversation']})",
        (
            f"reply        origin {first['origin']}, shape {first['shape']}, "
            f"{'partial (cut)' if first['partial'] else 'finished'}"
        ),
        "",
        "request:",
    ]
    lines += request_lines(request)
    lines += ["", "reply text:", json.dumps(first["reply"], ensure_ascii=False), "", "rows:"]
    lines += [row_line(each) for _, each in rows.iterrows()]
    lines += [
        "",
        f"llama.cpp's reading ({row['chunking']}):",
        pretty(row["oracle_reading"]),
        "",
        f"the parser's reading ({row['chunking']}):",
        pretty(row["parser_reading"]),
    ]
    if first["truth"] is not None and not pd.isna(first["truth"]):
        lines += ["", "truth (the message the reply encodes):", pretty(first["truth"])]
        lines.append(
            f"llama.cpp vs truth: {first['oracle_vs_truth']}; parser vs truth: {first['parser_vs_truth']}"
        )
    lines += [
        "",
        f"first difference: {row['detail'] or row['error'] or 'none (the readings agree)'}",
        "",
        "replay just this case:",
        f"  {replay_command(run, first)}",
    ]
    return "\n".join(lines)
