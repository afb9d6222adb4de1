"""One self-contained HTML page of a run: new mismatches first, a linked heatmap, folded sections."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html import escape
from typing import Any

import pandas as pd

from reports.divergences import Verdict
from reports.groups import failure_groups
from reports.oracle_defects import DefectReport
from reports.runs import Run, ordered_chunkings
from reports.show import show_command
from reports.statuses import MISMATCH_KINDS, STREAM_CHECKS, STRUCTURAL_CHECKS, Status
from reports.summary import headline, stamp_line, totals
from reports.tables import Tables, rate

EXAMPLES_PER_KIND = 3
GROUPS_PER_CELL = 8
NEW_STATUSES = (Status.MISMATCH, Status.PARSER_ERROR, Status.ORACLE_ERROR)
GROUP_COLUMNS = ["rows", "status", "syntax", "shapes", "kind", "what"]
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1360px; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td { max-width: 26em; overflow-wrap: break-word; }
.wide { overflow-x: auto; max-width: 100%; }
table.heatmap td { text-align: center; min-width: 4.5em; padding: 0; }
table.heatmap td a, table.heatmap td span { display: block; padding: 2px 6px; color: #222; text-decoration: none; }
table.heatmap td a:hover { outline: 2px solid #333; }
table.heatmap small { color: #555; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 6px; white-space: pre-wrap; word-break: break-all;
      max-height: 24em; overflow: auto; margin: 0; }
code.cmd { background: #eef; padding: 1px 4px; user-select: all; }
mark { background: #ffb3b3; outline: 1px solid #c00; }
.example { border: 1px solid #bbb; padding: .5em; margin: .7em 0; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: .5em; }
.strict { color: #a00; font-weight: bold; }
details { margin: .4em 0; }
details > summary { cursor: pointer; font-size: 1.2em; font-weight: bold; padding: .2em 0; }
details details > summary { font-size: 1em; font-weight: normal; }
details:target > summary, details:target { background: #fff6d5; }
"""


def anchor(*parts: str) -> str:
    """An HTML id made of parts, safe in a URL fragment."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "--".join(parts)).strip("-")


def heat_colour(share: float) -> str:
    """Red at 0, yellow at 0.5, green at 1, as an inline CSS colour."""
    return f"hsl({round(share * 120)}, 70%, 78%)"


def cell_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per template and chunking: rows, unsupported, matches, known divergences and new failures."""
    flags = rows.assign(
        is_match=(rows["status"] == Status.MATCH.value).astype(int),
        is_known=(rows["status"] == Status.KNOWN.value).astype(int),
        is_unsupported=(rows["status"] == Status.UNSUPPORTED.value).astype(int),
    )
    return flags.groupby(["template", "chunking"]).agg(
        total=("is_match", "size"),
        matched=("is_match", "sum"),
        known=("is_known", "sum"),
        unsupported=("is_unsupported", "sum"),
    )


def heat_cell(template: str, chunking: str, counts: pd.DataFrame) -> str:
    """One heatmap cell: the match rate of the rows the parser reads, known divergences apart, linked."""
    if (template, chunking) not in counts.index:
        return '<td style="background:#eee">–</td>'
    total, matched, known, unsupported = (int(value) for value in counts.loc[(template, chunking)])
    if unsupported == total:
        return f'<td style="background:#ddd" title="{total} rows unsupported">unsupported</td>'
    judged = total - unsupported - known
    share = matched / judged if judged else 1.0
    note = f"<br><small>+{known} known</small>" if known else ""
    title = f"{rate(matched, judged)} match; {known} known divergences; {unsupported} unsupported"
    text = f"{100 * share:.0f}%{note}"
    body = (
        f'<a href="#{anchor("cell", template, chunking)}">{text}</a>'
        if matched < total - unsupported
        else f"<span>{text}</span>"
    )
    return f'<td style="background:{heat_colour(share)}" title="{escape(title)}">{body}</td>'


def heatmap(rows: pd.DataFrame) -> str:
    """A template × chunking table of match rates (unsupported rows and known divergences left out)."""
    chunkings = ordered_chunkings(rows["chunking"])
    counts = cell_counts(rows)
    head = "".join(f"<th>{escape(chunking)}</th>" for chunking in chunkings)
    lines = [f'<table class="heatmap" id="heatmap"><tr><th>template</th>{head}</tr>']
    for template in sorted(rows["template"].unique()):
        cells = "".join(heat_cell(template, chunking, counts) for chunking in chunkings)
        lines.append(f"<tr><th>{escape(template)}</th>{cells}</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def pretty_reading(text: str | None) -> str:
    """A stored reading as indented JSON ('' when missing)."""
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return ""
    return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)


def first_difference(left: str, right: str) -> int:
    """The offset of the first character where two texts differ (the shorter length if one is a prefix)."""
    for offset, (a, b) in enumerate(zip(left, right)):
        if a != b:
            return offset
    return min(len(left), len(right))


def marked(text: str, offset: int) -> str:
    """Escaped text with the character at `offset` highlighted (an empty mark at the end)."""
    head, char, tail = text[:offset], text[offset : offset + 1], text[offset + 1 :]
    return f"{escape(head)}<mark>{escape(char) if char else '&#8203;'}</mark>{escape(tail)}"


def command(case_id: str, run: Run) -> str:
    """The `chatparity show` command of a case, ready to copy."""
    return f'<code class="cmd">{escape(show_command(case_id, run.directory))}</code>'


def example(group: Mapping[str, Any], run: Run) -> str:
    """One failure group's representative row: where, how many, the reply and both readings."""
    oracle, parser = pretty_reading(group["oracle_reading"]), pretty_reading(group["parser_reading"])
    offset = first_difference(oracle, parser)
    shown = f"{oracle[offset : offset + 1]!r} vs {parser[offset : offset + 1]!r}"
    return "\n".join(
        [
            '<div class="example">',
            (
                f"<p><b>{escape(str(group['template']))}</b> · mode {escape(str(group['mode']))} · chunking "
                f"{escape(str(group['chunking']))} · shape {escape(str(group['shape']))} · "
                f"{int(group['rows'])} rows fail this way · {command(str(group['case_id']), run)}</p>"
            ),
            (
                f"<p>first difference: <code>{escape(str(group['detail'] or group['error']))}</code>; in the "
                f"readings below at character {offset}: <code>{escape(shown)}</code></p>"
            ),
            f"<p>reply:</p><pre>{escape(str(group['reply']))}</pre>",
            '<div class="pair">',
            f"<div><p>oracle (llama.cpp) reading:</p><pre>{marked(oracle, offset)}</pre></div>",
            f"<div><p>parser reading:</p><pre>{marked(parser, offset)}</pre></div>",
            "</div></div>",
        ]
    )


def examples(rows: pd.DataFrame, run: Run, statuses: tuple[Status, ...] = NEW_STATUSES) -> str:
    """For each mismatch kind (then errors), a few representative rows of its most common failure groups."""
    groups = failure_groups(rows, statuses)
    parts = []
    for kind in (*MISMATCH_KINDS, ""):
        of_kind = groups[groups["kind"] == kind]
        if of_kind.empty:
            continue
        name = kind or "errors"
        parts.append(
            f'<h3 id="examples-{escape(name)}">{escape(name)} ({int(of_kind["rows"].sum())} rows)</h3>'
        )
        parts += [example(group, run) for _, group in of_kind.head(EXAMPLES_PER_KIND).iterrows()]
    return "\n".join(parts) or "<p>none</p>"


def group_table(groups: pd.DataFrame, run: Run, columns: list[str]) -> str:
    """Failure groups as a table: their columns, an example row and the command that shows it."""
    return group_rows(groups.to_dict("records"), run, columns)


def group_rows(groups: list[dict[str, Any]], run: Run, columns: list[str]) -> str:
    """`group_table` of failure groups given as records."""
    if not groups:
        return "<p>none</p>"
    head = "".join(
        f"<th>{escape(column)}</th>" for column in [*columns, "example (and the command showing it)"]
    )
    lines = [f'<div class="wide"><table><tr>{head}</tr>']
    for group in groups:
        cells = "".join(f"<td>{escape(str(group[column]))}</td>" for column in columns)
        where = f"{group['template']} {group['mode']} {group['chunking']}"
        lines.append(f"<tr>{cells}<td>{escape(where)}<br>{command(str(group['case_id']), run)}</td></tr>")
    lines.append("</table></div>")
    return "\n".join(lines)


def cell_sections(rows: pd.DataFrame, run: Run) -> str:
    """A folded section per heatmap cell that has failing rows: its failure groups and first example."""
    parts = []
    failing = rows[~rows["status"].isin([Status.MATCH.value, Status.UNSUPPORTED.value])]
    cell = ["template", "chunking"]
    folded = failure_groups(failing, (*NEW_STATUSES, Status.KNOWN, Status.UNEXPECTED_MATCH), tuple(cell))
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for group in folded.to_dict("records"):
        by_cell.setdefault((group["template"], group["chunking"]), []).append(group)
    for (template, chunking), size in failing.groupby(cell, sort=True).size().items():
        groups = by_cell.get((template, chunking), [])
        summary = f"{template} · {chunking}: {size} rows fail ({len(groups)} ways)"
        body = group_rows(groups[:GROUPS_PER_CELL], run, ["rows", "status", "shapes", "kind", "what"])
        if groups:
            body += example(groups[0], run)
        parts.append(
            f"<details><summary>{escape(summary)}</summary>"
            f'<div id="{anchor("cell", template, chunking)}">{body}</div></details>'
        )
    return "\n".join(parts) or "<p>none</p>"


def frame_html(frame: pd.DataFrame) -> str:
    """A data frame as an escaped HTML table."""
    if frame.empty:
        return "<p>none</p>"
    return '<div class="wide">' + frame.to_html(index=False, escape=True, border=0, na_rep="") + "</div>"


def section(title: str, body: str, key: str, opened: bool = False) -> str:
    """A folding section of the page."""
    return f'<details id="{key}"{" open" if opened else ""}><summary>{escape(title)}</summary>\n{body}\n</details>'


def page(run: Run, verdict: Verdict, tables: Tables, defects: DefectReport) -> str:
    """The whole report page."""
    t = totals(verdict)
    rows = verdict.rows
    new = failure_groups(rows, NEW_STATUSES)
    known = failure_groups(rows, (Status.KNOWN,))
    streams = verdict.stream_failures
    structures = verdict.structure_failures
    stale = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.stale])
    unexpected = verdict.unexpected[["template", "mode", "shape", "chunking", "case_id", "divergence"]]
    body = [
        f"<h1>chatparity report: {escape(run.name)}</h1>",
        f"<p>{escape(stamp_line(run))}</p>",
        f"<p>{escape(headline(t))}</p>",
    ]
    if run.lost:
        body.append(f'<p class="strict">{len(run.lost)} sweep items failed; their rows are missing:</p>')
        body.append("<ul>" + "".join(f"<li>{escape(item)}</li>" for item in run.lost) + "</ul>")
    if verdict.strict_failures:
        body.append(
            f'<p class="strict">{len(unexpected)} unexpected matches and {len(stale)} stale known '
            "divergences: these fail the gate.</p>"
        )
    new_rows = int(new["rows"].sum()) if not new.empty else 0
    body += [
        section(
            f"New mismatches and errors ({new_rows} rows, {len(new)} distinct)",
            group_table(new, run, GROUP_COLUMNS) + "<h3>Examples</h3>" + examples(rows, run),
            "new",
            opened=True,
        ),
        section(
            "Match rate: template × chunking (unsupported rows and known divergences left out; a cell links "
            "to its failing rows)",
            heatmap(rows),
            "heatmap-section",
            opened=True,
        ),
        section("Failing rows per template × chunking", cell_sections(rows, run), "cells"),
        section(
            f"Stream check failures ({len(streams)} distinct; checks: {', '.join(STREAM_CHECKS)})",
            group_table(streams, run, ["rows", "syntax", "shapes", "what", "templates"]),
            "streams",
        ),
        section(
            f"Structural check failures of the parser's readings ({len(structures)} distinct; checks: "
            f"{', '.join(STRUCTURAL_CHECKS)}; 'llama.cpp too' where llama.cpp's reading breaks it as well)",
            group_table(structures, run, ["rows", "syntax", "shapes", "what", "llama.cpp too", "templates"]),
            "structure",
        ),
        section(
            f"Known divergences ({t.by_status[Status.KNOWN.value]} rows, {len(known)} distinct)",
            group_table(known, run, GROUP_COLUMNS),
            "known",
        ),
    ]
    for by, shown in tables.shown.items():
        parts = [f"<h3>{escape(name)}</h3>{frame_html(frame)}" for name, frame in shown.items()]
        body.append(section(f"Per {by}", "\n".join(parts), anchor("per", by)))
    body += [
        section(f"Unexpected matches ({len(unexpected)})", frame_html(unexpected), "unexpected"),
        section(f"Stale known divergences ({len(stale)})", frame_html(stale), "stale"),
        section(
            f"Where llama.cpp departs from the template's meaning ({len(defects.clusters)} entries; "
            "see oracle_defects.md)",
            frame_html(defects.counts),
            "defects",
        ),
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>chatparity {escape(run.name)}</title><style>{STYLE}</style></head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )
