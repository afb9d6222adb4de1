"""The multi-turn tables: per template and mode, is every prompt an exact append of the last plus reply."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from harness.multiturn import RENDERERS
from harness.multiturn_checks import ADVICE, Break
from reports.tables import markdown_table, records
from reports.template_behaviours import Behaviour, known_reason

RUNS_DIR = Path("reports") / "runs"
SERVER_RENDERER = RENDERERS[0]
FILES = ("multiturn.md", "multiturn.json", "multiturn.csv")
WIDTH = 90


@dataclass(frozen=True)
class MultiturnTables:
    """The turn rows classified, a row per loop and renderer, and the per-template, mode and break tables."""

    rows: pd.DataFrame
    loops: pd.DataFrame
    templates: pd.DataFrame
    modes: pd.DataFrame
    breaks: pd.DataFrame


def classified(rows: list[dict[str, Any]], behaviours: tuple[Behaviour, ...]) -> pd.DataFrame:
    """The turn rows with `status` (ok, known, break, stopped) and the known behaviour's reason."""
    frame = pd.DataFrame(rows)
    reasons = [
        known_reason(behaviours, row.template, row.mode, row.breaks) if row.breaks else ""
        for row in frame.itertuples()
    ]
    status = [
        "stopped" if row.append == "stopped" else "ok" if not row.breaks else "known" if reason else "break"
        for row, reason in zip(frame.itertuples(), reasons, strict=True)
    ]
    return frame.assign(status=status, known=reasons)


def loop_row(
    template: str, family: str, mode: str, loop: str, renderer: str, turns: pd.DataFrame
) -> dict[str, Any]:
    """One loop under one renderer: its status, its first break and why it stopped (if it did)."""
    broken = turns[turns["status"].isin(["break", "known"])].sort_values("turn")
    stopped = turns[turns["status"] == "stopped"]
    first = broken.iloc[0] if len(broken) else None
    if (turns["status"] == "break").any():
        status = "break"
    elif len(broken):
        status = "known"
    elif len(stopped):
        status = "stopped"
    else:
        status = "safe"
    return {
        "template": template,
        "family": family,
        "mode": mode,
        "loop": loop,
        "renderer": renderer,
        "status": status,
        "turns": int((turns["status"] != "stopped").sum()),
        "first_break_turn": int(first["turn"]) if first is not None else None,
        "first_break": str(first["breaks"]) if first is not None else "",
        "offset": int(first["offset"]) if first is not None and first["append"] == "break" else None,
        "expected": str(first["expected"]) if first is not None else "",
        "actual": str(first["actual"]) if first is not None else "",
        "breaks": sorted(set(broken["breaks"])),
        "known": str(first["known"]) if first is not None else "",
        "stopped": str(stopped.iloc[0]["note"]) if len(stopped) else "",
    }


def loops_of(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per template, mode and renderer (a stop row counts for both renderers)."""
    out = []
    for (template, family, mode, loop), turns in frame.groupby(
        ["template", "family", "mode", "loop"], sort=True
    ):
        for renderer in RENDERERS:
            mine = turns[turns["renderer"].isin([renderer, "-"])]
            out.append(loop_row(str(template), str(family), str(mode), str(loop), renderer, mine))
    return pd.DataFrame(out)


def fraction(part: int, whole: int) -> str:
    """`part/whole`."""
    return f"{part}/{whole}"


def append_safe(statuses: pd.Series) -> str:
    """yes (every loop that ran is safe), known (only known behaviours break it), no, or not run."""
    ran = statuses[statuses != "stopped"]
    if ran.empty:
        return "not run"
    if (ran == "break").any():
        return "no"
    return "known" if (ran == "known").any() else "yes"


def break_list(loops: pd.DataFrame) -> list[str]:
    """The distinct breaks of some loops, in the order of Break."""
    found = {name for names in loops["breaks"] for name in names}
    return [each.value for each in Break if each.value in found]


def template_row(template: str, loops: pd.DataFrame, turns: pd.DataFrame) -> dict[str, Any]:
    """One template's summary for servers (llama.cpp's render), with jinja2's agreement beside it."""
    server = loops[loops["renderer"] == SERVER_RENDERER].reset_index(drop=True)
    jinja = loops[loops["renderer"] == "jinja2"]
    first = server[server["first_break_turn"].notna()].sort_values("first_break_turn", kind="stable")
    breaks = break_list(server)
    read = turns[(turns["renderer"] == SERVER_RENDERER)]
    known = set(read[read["status"] == "known"]["breaks"]) - set(read[read["status"] == "break"]["breaks"])
    parser_read = read[read["parser"] != ""]
    return {
        "template": template,
        "family": str(server["family"].iloc[0]),
        "append-safe": append_safe(server["status"]),
        "safe modes": fraction(int((server["status"] == "safe").sum()), len(server)),
        "known modes": int((server["status"] == "known").sum()),
        "stopped modes": int((server["status"] == "stopped").sum()),
        "first break": (
            f"turn {int(first.iloc[0]['first_break_turn'])} ({first.iloc[0]['mode']})" if len(first) else ""
        ),
        "what breaks": "; ".join(name + (" (known)" if name in known else "") for name in breaks),
        "server must": "; ".join(ADVICE[Break(name)] for name in breaks),
        "jinja2": append_safe(jinja["status"]),
        "parses": fraction(int((read["parses"] == "match").sum()), len(read)),
        "parser": fraction(int((parser_read["parser"] == "match").sum()), len(parser_read))
        if len(parser_read)
        else "",
    }


def mode_table(loops: pd.DataFrame) -> pd.DataFrame:
    """Per thinking and tool mode (loops without template kwargs): how many templates are append-safe."""
    server = loops[(loops["renderer"] == SERVER_RENDERER) & (loops["mode"].str.count("/") == 1)]
    out = []
    for mode, group in server.groupby("mode", sort=True):
        counts = group["status"].value_counts()
        out.append(
            {
                "mode": mode,
                "templates": len(group),
                "append-safe": int(counts.get("safe", 0)),
                "known behaviours only": int(counts.get("known", 0)),
                "breaks": int(counts.get("break", 0)),
                "stopped": int(counts.get("stopped", 0)),
            }
        )
    return pd.DataFrame(out)


def break_table(loops: pd.DataFrame) -> pd.DataFrame:
    """Per break class: in how many loops and templates it shows (llama.cpp's render), how many are known."""
    server = loops[loops["renderer"] == SERVER_RENDERER]
    out = []
    for each in Break:
        hit = server[server["breaks"].apply(lambda names, name=each.value: name in names)]
        if hit.empty:
            continue
        out.append(
            {
                "break": each.value,
                "loops": len(hit),
                "templates": hit["template"].nunique(),
                "known loops": int((hit["status"] == "known").sum()),
                "server must": ADVICE[each],
            }
        )
    return pd.DataFrame(out)


def summarise(rows: list[dict[str, Any]], behaviours: tuple[Behaviour, ...]) -> MultiturnTables:
    """Every table of a multi-turn run."""
    frame = classified(rows, behaviours)
    loops = loops_of(frame)
    templates = pd.DataFrame(
        [
            template_row(str(name), group, frame[frame["template"] == name])
            for name, group in loops.groupby("template", sort=True)
        ]
    )
    return MultiturnTables(frame, loops, templates, mode_table(loops), break_table(loops))


def first_breaks(tables: MultiturnTables) -> pd.DataFrame:
    """The first break of every loop that breaks under llama.cpp's render, with both sides at its offset."""
    loops = tables.loops
    broken = loops[(loops["renderer"] == SERVER_RENDERER) & loops["status"].isin(["break", "known"])]
    return broken[
        ["template", "mode", "first_break_turn", "first_break", "offset", "expected", "actual", "status"]
    ].rename(columns={"first_break_turn": "turn", "first_break": "break"})


def stopped_loops(tables: MultiturnTables) -> pd.DataFrame:
    """The loops that could not run three turns, and why."""
    loops = tables.loops
    stopped = loops[(loops["renderer"] == SERVER_RENDERER) & (loops["stopped"] != "")]
    return stopped[["template", "mode", "turns", "stopped"]]


APPEND_SAFE_LABELS = (
    ("yes", "append-safe in every mode"),
    ("known", "breaking only by known behaviours"),
    ("no", "breaking"),
    ("not run", "not run"),
)


def headline(tables: MultiturnTables) -> str:
    """One line: how many templates are append-safe, known-only, breaking, not run."""
    counts = tables.templates["append-safe"].value_counts()
    parts = [f"{int(counts.get(key, 0))} {label}" for key, label in APPEND_SAFE_LABELS]
    return f"{len(tables.templates)} templates: " + ", ".join(parts) + " (llama.cpp's render)."


def multiturn_markdown(tables: MultiturnTables, stamp: dict[str, Any]) -> str:
    """The multi-turn report: headline, per mode, per break, per template, first breaks, stopped loops."""
    known = tables.loops[(tables.loops["renderer"] == SERVER_RENDERER) & (tables.loops["status"] == "known")]
    known_table = known.drop_duplicates(["template", "first_break"])[
        ["template", "first_break", "known"]
    ].rename(columns={"first_break": "break", "known": "reason"})
    return "\n".join(
        [
            "# Multi-turn: every prompt an exact append of the last prompt plus the reply",
            "",
            f"Parser under test: `{stamp.get('parser', '')}`; llama.cpp {stamp.get('llama_cpp_commit', '')}.",
            "Each loop: system + question, then three replies the template itself writes (calls, calls, answer; or",
            "three answers), each read by llama.cpp and put back into the history as a server does. Per turn:",
            "`append` (prompt N+1 starts with prompt N + reply), `boundary` (exactly one turn end after the reply),",
            "`parses` (the reply reads back as meant, whitespace around reasoning and content aside).",
            "",
            headline(tables),
            "",
            "## Per mode (templates, without template kwargs)",
            "",
            markdown_table(tables.modes),
            "",
            "## Classes of break",
            "",
            markdown_table(tables.breaks),
            "",
            "## Per template",
            "",
            markdown_table(tables.templates, WIDTH),
            "",
            "## Known template behaviours seen",
            "",
            markdown_table(known_table, WIDTH),
            "",
            "## First break of each loop (llama.cpp's render; offset into prompt N+1)",
            "",
            markdown_table(first_breaks(tables), WIDTH),
            "",
            "## Loops that stopped before three turns",
            "",
            markdown_table(stopped_loops(tables), WIDTH),
            "",
        ]
    )


def write_multiturn(tables: MultiturnTables, stamp: dict[str, Any], out: Path) -> list[Path]:
    """Write multiturn.md, multiturn.json (stamp, per template, per mode, breaks, loops) and multiturn.csv."""
    out.mkdir(parents=True, exist_ok=True)
    markdown, data, table = (out / name for name in FILES)
    markdown.write_text(multiturn_markdown(tables, stamp), encoding="utf-8")
    value = {
        "stamp": stamp,
        "templates": records(tables.templates),
        "modes": records(tables.modes),
        "breaks": records(tables.breaks),
        "loops": records(tables.loops),
    }
    data.write_text(json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    tables.rows.to_csv(table, index=False, lineterminator="\n")
    return [markdown, data, table]


def default_out(parser: str) -> Path:
    """reports/runs/multiturn-PARSER, the parser spec made file-name safe."""
    return RUNS_DIR / f"multiturn-{re.sub(r'[^A-Za-z0-9._-]+', '_', parser).strip('_')}"


def find_multiturn(run_directory: Path, parser: str) -> Path | None:
    """The multi-turn results for a run: multiturn.json in its directory, else in ../multiturn-PARSER/."""
    for candidate in (
        run_directory / "multiturn.json",
        run_directory.parent / default_out(parser).name / "multiturn.json",
    ):
        if candidate.is_file():
            return candidate
    return None


def append_safe_by_template(path: Path) -> dict[str, str]:
    """Per template, its append-safe verdict from a multiturn.json."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {row["template"]: row["append-safe"] for row in data.get("templates", [])}


def append_safe_for_run(run_directory: Path, parser: str) -> dict[str, str] | None:
    """Per template, the append-safe verdict of the run's multi-turn results, None when there are none."""
    found = find_multiturn(run_directory, parser)
    return append_safe_by_template(found) if found is not None else None


def multiturn_section(run_directory: Path, parser: str) -> list[str]:
    """A report's lines linking the run's multi-turn results with their headline (none when absent)."""
    found = find_multiturn(run_directory, parser)
    if found is None:
        return []
    data = json.loads(found.read_text(encoding="utf-8"))
    counts = pd.Series([row["append-safe"] for row in data.get("templates", [])]).value_counts()
    link = os.path.relpath(found.with_suffix(".md"), run_directory)
    summary = ", ".join(f"{label} {int(counts.get(key, 0))}" for key, label in APPEND_SAFE_LABELS)
    return [f"Multi-turn append check ([{link}]({link})): {summary}.", ""]
