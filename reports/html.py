"""One self-contained HTML page of a run: the verdict and the failing rows first, a linked heatmap, the parser's
policies and llama.cpp's defects, folded sections."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html import escape
from typing import Any

import pandas as pd

from harness.policies import Policies
from reports.divergences import Verdict
from reports.groups import failure_groups
from reports.judgement import Judgement
from reports.oracle_defects import DefectReport
from reports.runs import Run, ordered_chunkings
from reports.show import show_command
from reports.statuses import MISMATCH_KINDS, STREAM_CHECKS, STRUCTURAL_CHECKS, Status, failing_mask
from reports.summary import rows_line, stamp_line, streams_line, totals
from reports.tables import Tables, rate

EXAMPLES_PER_KIND = 3
GROUPS_PER_CELL = 8
NEW_STATUSES = (Status.MISMATCH, Status.PARSER_ERROR, Status.ORACLE_ERROR)
ACCOUNTED = (Status.POLICY, Status.DEFECT)
GROUP_COLUMNS = ["rows", "status", "syntax", "shapes", "kind", "what"]
FAILURE_COLUMNS = ["change", "template", "mode", "shape", "chunking", "base", "head", "detail"]
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
.strict, .fail { color: #a00; font-weight: bold; }
.pass { color: #070; font-weight: bold; }
tr.differs td { background: #fff0f0; }
details { margin: .4em 0; }
details > summary { cursor: pointer; font-size: 1.2em; font-weight: bold; padding: .2em 0; }
details details > summary { font-size: 1em; font-weight: normal; }
h3:target { background: #fff6d5; }
"""


def anchor(*parts: str) -> str:
    """An HTML id made of parts, safe in a URL fragment."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "--".join(parts)).strip("-")


def heat_colour(share: float) -> str:
    """Red at 0, yellow at 0.5, green at 1, as an inline CSS colour."""
    return f"hsl({round(share * 120)}, 70%, 78%)"


def cell_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per template and chunking: rows, unsupported, failing rows (final or stream), policy and llama.cpp defect
    rows."""
    flags = rows.assign(
        is_unsupported=(rows["status"] == Status.UNSUPPORTED.value).astype(int),
        is_failing=failing_mask(rows).astype(int),
        is_policy=(rows["status"] == Status.POLICY.value).astype(int),
        is_defect=(rows["status"] == Status.DEFECT.value).astype(int),
    )
    return flags.groupby(["template", "chunking"]).agg(
        total=("is_failing", "size"),
        failing=("is_failing", "sum"),
        policy=("is_policy", "sum"),
        defect=("is_defect", "sum"),
        unsupported=("is_unsupported", "sum"),
    )


def heat_cell(template: str, chunking: str, counts: pd.DataFrame) -> str:
    """One heatmap cell: the share of the rows the parser reads that pass (their final reading and their streams),
    with the rows a policy or a llama.cpp defect accounts for, linked to the cell's rows."""
    if (template, chunking) not in counts.index:
        return '<td style="background:#eee">–</td>'
    total, failing, policy, defect, unsupported = (int(value) for value in counts.loc[(template, chunking)])
    if unsupported == total:
        return f'<td style="background:#ddd" title="{total} rows unsupported">unsupported</td>'
    read = total - unsupported
    share = (read - failing) / read
    notes = [f"{failing} fail" if failing else "", f"{policy} policy" if policy else "",
             f"{defect} llama.cpp" if defect else ""]
    note = "".join(f"<br><small>{escape(text)}</small>" for text in notes if text)
    title = (f"{rate(read - failing, read)} pass (final reading and streams); {policy} parser policy; "
             f"{defect} llama.cpp defect; {unsupported} unsupported")
    text = f"{100 * share:.0f}%{note}"
    body = (
        f'<a href="#{anchor("cell", template, chunking)}">{text}</a>'
        if failing or policy or defect
        else f"<span>{text}</span>"
    )
    return f'<td style="background:{heat_colour(share)}" title="{escape(title)}">{body}</td>'


def heatmap(rows: pd.DataFrame) -> str:
    """A template × chunking table of the share of rows that pass, final reading and streams (unsupported rows
    left out)."""
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


def reading_fields(text: str | None) -> dict[str, str]:
    """A stored reading's fields by path: reasoning, content and each call's name, arguments and id, or its
    rejection."""
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return {}
    data = json.loads(text)
    if "rejected" in data:
        return {"rejected": str(data["rejected"])}
    fields = {"reasoning_content": data.get("reasoning_content", ""), "content": data.get("content", "")}
    for index, call in enumerate(data.get("tool_calls", [])):
        for key in ("name", "arguments", "id"):
            fields[f"tool_calls[{index}].{key}"] = str(call.get(key, ""))
    return fields


def readings_table(oracle_text: str | None, parser_text: str | None) -> str:
    """llama.cpp's and the parser's readings side by side, a line per field; the first field that differs is
    marked, with its first differing character."""
    oracle, parser = reading_fields(oracle_text), reading_fields(parser_text)
    lines = ["<table><tr><th>field</th><th>llama.cpp</th><th>parser</th></tr>"]
    marked_one = False
    for path in dict.fromkeys([*oracle, *parser]):
        left, right = oracle.get(path), parser.get(path)
        differs = left != right
        if differs and not marked_one and left is not None and right is not None:
            offset = first_difference(left, right)
            cells = f"<td><pre>{marked(left, offset)}</pre></td><td><pre>{marked(right, offset)}</pre></td>"
            marked_one = True
        else:
            cells = "".join(
                f"<td><pre>{'<i>absent</i>' if value is None else escape(value)}</pre></td>" for value in (left, right)
            )
        row_class = ' class="differs"' if differs else ""
        lines.append(f"<tr{row_class}><th>{escape(path)}</th>{cells}</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def command(case_id: str, run: Run) -> str:
    """The `chatparity show` command of a case, ready to copy."""
    return f'<code class="cmd">{escape(show_command(case_id, run.directory))}</code>'


def example(group: Mapping[str, Any], run: Run) -> str:
    """One group's representative row: where, how many, the reply and both readings field by field."""
    return "\n".join(
        [
            '<div class="example">',
            (
                f"<p><b>{escape(str(group['template']))}</b> · mode {escape(str(group['mode']))} · chunking "
                f"{escape(str(group['chunking']))} · shape {escape(str(group['shape']))} · "
                f"{int(group['rows'])} rows this way · {command(str(group['case_id']), run)}</p>"
            ),
            f"<p>difference: <code>{escape(str(group['detail'] or group['error']))}</code></p>",
            f"<p>reply:</p><pre>{escape(str(group['reply']))}</pre>",
            readings_table(group["oracle_reading"], group["parser_reading"]),
            "</div>",
        ]
    )


def examples(rows: pd.DataFrame, run: Run, statuses: tuple[Status, ...] = NEW_STATUSES) -> str:
    """For each mismatch kind (then errors), a few representative rows of its most common groups."""
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
    """Per heatmap cell with rows that differ or fail, under a heading its heatmap link lands on (the browser
    opens the folded section around it): its groups and first example."""
    parts = []
    failing = rows[~rows["status"].isin([Status.MATCH.value, Status.UNSUPPORTED.value]) | failing_mask(rows)]
    cell = ["template", "chunking"]
    folded = failure_groups(failing, (*NEW_STATUSES, *ACCOUNTED, Status.UNEXPECTED_MATCH), tuple(cell))
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for group in folded.to_dict("records"):
        by_cell.setdefault((group["template"], group["chunking"]), []).append(group)
    for (template, chunking), size in failing.groupby(cell, sort=True).size().items():
        groups = by_cell.get((template, chunking), [])
        summary = f"{template} · {chunking}: {size} rows differ or fail ({len(groups)} ways of differing)"
        body = group_rows(groups[:GROUPS_PER_CELL], run, ["rows", "status", "shapes", "kind", "what"])
        if groups:
            body += example(groups[0], run)
        parts.append(f'<h3 id="{anchor("cell", template, chunking)}">{escape(summary)}</h3>\n{body}')
    return "\n".join(parts) or "<p>none</p>"


def frame_html(frame: pd.DataFrame) -> str:
    """A data frame as an escaped HTML table."""
    if frame.empty:
        return "<p>none</p>"
    return '<div class="wide">' + frame.to_html(index=False, escape=True, border=0, na_rep="") + "</div>"


def section(title: str, body: str, key: str, opened: bool = False) -> str:
    """A folding section of the page."""
    return f'<details id="{key}"{" open" if opened else ""}><summary>{escape(title)}</summary>\n{body}\n</details>'


def failures_table(failures: pd.DataFrame, run: Run) -> str:
    """The rows that fail the run against its baseline, each with how it fails and the command that shows it."""
    if failures.empty:
        return "<p>none</p>"
    head = "".join(f"<th>{escape(column)}</th>" for column in [*FAILURE_COLUMNS, "show"])
    lines = [f'<div class="wide"><table><tr>{head}</tr>']
    for row in failures.to_dict("records"):
        cells = "".join(f"<td>{escape('' if row[column] is None else str(row[column]))}</td>"
                        for column in FAILURE_COLUMNS)
        lines.append(f"<tr>{cells}<td>{command(str(row['case_id']), run)}</td></tr>")
    lines.append("</table></div>")
    return "\n".join(lines)


def policies_table(policies: Policies, judgement: Judgement) -> str:
    """The parser's policies: what each says, where the parser documents it, the rows and snapshots it accounts
    for."""
    if not policies.policies:
        return "<p>the parser declares no policies</p>"
    head = "".join(f"<th>{name}</th>" for name in ("policy", "rule", "rows", "snapshots", "reason", "documented"))
    lines = [f"<table><tr>{head}</tr>"]
    for policy in policies.policies:
        lines.append(
            f"<tr><td>{escape(policy.name)}</td><td>{escape(policy.rule)}</td>"
            f"<td>{judgement.policy_rows[policy.name]:,}</td><td>{judgement.policy_snapshots[policy.name]:,}</td>"
            f"<td>{escape(policy.reason)}</td><td>{escape(policy.documented)}</td></tr>"
        )
    lines.append("</table>")
    return "\n".join(lines)


def defects_table(judgement: Judgement) -> str:
    """The llama.cpp defects that account for rows and snapshots, by label."""
    names = sorted(set(judgement.defect_rows) | set(judgement.defect_snapshots))
    if not names:
        return "<p>none</p>"
    lines = ["<table><tr><th>llama.cpp defect</th><th>whole readings</th><th>stream snapshots</th></tr>"]
    lines += [
        f"<tr><td>{escape(name)}</td><td>{judgement.defect_rows[name]:,}</td>"
        f"<td>{judgement.defect_snapshots[name]:,}</td></tr>"
        for name in names
    ]
    lines.append("</table>")
    return "\n".join(lines)


def verdict_html(judgement: Judgement) -> str:
    """The verdict: PASS or FAIL, then what accounts for the rows."""
    first, *rest = judgement.lines()
    css = "pass" if judgement.passed else "fail"
    return f'<p class="{css}">{escape(first)}</p><ul>' + "".join(
        f"<li>{escape(line.strip())}</li>" for line in rest
    ) + "</ul>"


def page(run: Run, verdict: Verdict, judgement: Judgement, tables: Tables, defects: DefectReport,
         policies: Policies) -> str:
    """The whole report page, the verdict first."""
    t = totals(verdict)
    rows = verdict.rows
    accounted = failure_groups(rows, ACCOUNTED)
    streams = verdict.stream_failures
    structures = verdict.structure_failures
    stale = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.stale]
                         + [{"entry": f"policy {policy.name}", "reason": policy.reason}
                            for policy in verdict.stale_policies])
    unexpected = verdict.unexpected[["template", "mode", "shape", "chunking", "case_id", "explained"]]
    failures = judgement.failures
    body = [
        f"<h1>chatparity report: {escape(run.name)}</h1>",
        verdict_html(judgement),
        f"<p>{escape(stamp_line(run))}</p>",
        f"<p>{escape(rows_line(t))}<br>{escape(streams_line(t))}</p>",
    ]
    body += [
        section(
            f"Failing rows ({len(failures):,}: regressions, new failures and rows now declined, against the "
            "baseline)",
            failures_table(failures.head(200), run) + "<h3>Examples of parser bugs and errors</h3>"
            + examples(rows, run),
            "failing",
            opened=True,
        ),
        section(
            "Rows that pass: template × chunking (final reading and streams; unsupported rows left out; a cell "
            "links to the rows that differ or fail)",
            heatmap(rows),
            "heatmap-section",
            opened=True,
        ),
        section("Rows that differ or fail per template × chunking", cell_sections(rows, run), "cells"),
        section(
            f"The parser's policies ({t.by_status[Status.POLICY.value]:,} rows)",
            policies_table(policies, judgement) + "<h3>How rows differ as a policy says</h3>"
            + group_table(accounted[accounted["status"] == Status.POLICY.value], run, GROUP_COLUMNS)
            + "<h3>Examples</h3>" + examples(rows, run, (Status.POLICY,)),
            "policies",
        ),
        section(
            f"llama.cpp defects ({t.by_status[Status.DEFECT.value]:,} rows; never blamed on the parser; see "
            "oracle_defects.md for what llama.cpp gets wrong on its own)",
            defects_table(judgement)
            + group_table(accounted[accounted["status"] == Status.DEFECT.value], run, GROUP_COLUMNS)
            + "<h3>Where llama.cpp departs from the template's meaning</h3>" + frame_html(defects.counts),
            "defects",
        ),
        section(
            f"Accepted by the baseline without a reason ({len(judgement.accepted):,}; each a parser bug to fix "
            "or a rule to name)",
            failures_table(judgement.accepted.head(200), run),
            "accepted",
        ),
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
    ]
    for by, shown in tables.shown.items():
        parts = [f"<h3>{escape(name)}</h3>{frame_html(frame)}" for name, frame in shown.items()]
        body.append(section(f"Per {by}", "\n".join(parts), anchor("per", by)))
    body += [
        section(f"Unexpected matches ({len(unexpected)})", frame_html(unexpected), "unexpected"),
        section(f"Stale known divergences and policies ({len(stale)})", frame_html(stale), "stale"),
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
