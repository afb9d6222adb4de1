"""One self-contained HTML page of a run: tables, a template × chunking heatmap, and failing examples."""

from __future__ import annotations

import json
from html import escape

import pandas as pd

from reports.divergences import Verdict
from reports.groups import failure_groups, stream_groups
from reports.oracle_defects import DefectReport
from reports.runs import Run, ordered_chunkings
from reports.statuses import MISMATCH_KINDS, Status
from reports.summary import stamp_line, totals
from reports.tables import Tables, rate

EXAMPLES_PER_KIND = 3
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
table.heatmap td { text-align: center; min-width: 4em; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 6px; white-space: pre-wrap; word-break: break-all;
      max-height: 24em; overflow: auto; margin: 0; }
mark { background: #ffb3b3; outline: 1px solid #c00; }
.example { border: 1px solid #bbb; padding: .5em; margin: .7em 0; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: .5em; }
.strict { color: #a00; font-weight: bold; }
"""


def heat_colour(share: float) -> str:
    """Red at 0, yellow at 0.5, green at 1, as an inline CSS colour."""
    return f"hsl({round(share * 120)}, 70%, 78%)"


def heatmap(rows: pd.DataFrame) -> str:
    """A template × chunking table of match rates, each cell coloured by its rate (grey: all unsupported)."""
    chunkings = ordered_chunkings(rows["chunking"])
    flags = rows.assign(
        is_match=(rows["status"] == Status.MATCH.value).astype(int),
        is_unsupported=(rows["status"] == Status.UNSUPPORTED.value).astype(int),
    )
    counts = flags.groupby(["template", "chunking"]).agg(
        matched=("is_match", "sum"), total=("is_match", "size"), unsupported=("is_unsupported", "sum")
    )
    head = "".join(f"<th>{escape(chunking)}</th>" for chunking in chunkings)
    lines = [f'<table class="heatmap" id="heatmap"><tr><th>template</th>{head}</tr>']
    for template in sorted(rows["template"].unique()):
        cells = []
        for chunking in chunkings:
            if (template, chunking) not in counts.index:
                cells.append('<td style="background:#eee">–</td>')
                continue
            matched, total, unsupported = (int(value) for value in counts.loc[(template, chunking)])
            if unsupported == total:
                cells.append(f'<td style="background:#ddd" title="{total} rows unsupported">unsupported</td>')
                continue
            share = matched / total
            cells.append(
                f'<td style="background:{heat_colour(share)}" title="{escape(rate(matched, total))}">'
                f"{100 * share:.0f}%</td>"
            )
        lines.append(f"<tr><th>{escape(template)}</th>{''.join(cells)}</tr>")
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


def example(group: pd.Series) -> str:
    """One failure group's representative row: where, how many, the reply and both readings."""
    oracle, parser = pretty_reading(group["oracle_reading"]), pretty_reading(group["parser_reading"])
    offset = first_difference(oracle, parser)
    shown = f"{oracle[offset : offset + 1]!r} vs {parser[offset : offset + 1]!r}"
    return "\n".join(
        [
            '<div class="example">',
            (
                f"<p><b>{escape(str(group['template']))}</b> · mode {escape(str(group['mode']))} · chunking "
                f"{escape(str(group['chunking']))} · shape {escape(str(group['shape']))} · case "
                f"<code>{escape(str(group['case_id']))}</code> · {int(group['rows'])} rows fail this way</p>"
            ),
            (
                f"<p>first difference: <code>{escape(str(group['detail']))}</code>; in the readings below at "
                f"character {offset}: <code>{escape(shown)}</code></p>"
            ),
            f"<p>reply:</p><pre>{escape(str(group['reply']))}</pre>",
            '<div class="pair">',
            f"<div><p>oracle (llama.cpp) reading:</p><pre>{marked(oracle, offset)}</pre></div>",
            f"<div><p>parser reading:</p><pre>{marked(parser, offset)}</pre></div>",
            "</div></div>",
        ]
    )


def examples(rows: pd.DataFrame) -> str:
    """For each mismatch kind, a few representative rows of its most common failure groups."""
    groups = failure_groups(rows, (Status.MISMATCH,))
    parts = []
    for kind in MISMATCH_KINDS:
        of_kind = groups[groups["kind"] == kind].head(EXAMPLES_PER_KIND)
        if of_kind.empty:
            continue
        parts.append(
            f'<h3 id="examples-{escape(kind)}">{escape(kind)} '
            f"({int(groups[groups['kind'] == kind]['rows'].sum())} rows)</h3>"
        )
        parts += [example(group) for _, group in of_kind.iterrows()]
    return "\n".join(parts) or "<p>No mismatches.</p>"


def frame_html(frame: pd.DataFrame) -> str:
    """A data frame as an escaped HTML table."""
    if frame.empty:
        return "<p>none</p>"
    return frame.to_html(index=False, escape=True, border=0, na_rep="")


def page(run: Run, verdict: Verdict, tables: Tables, defects: DefectReport) -> str:
    """The whole report page."""
    t = totals(verdict)
    status = t.by_status
    groups = failure_groups(verdict.rows).drop(columns=["reply", "oracle_reading", "parser_reading", "error"])
    stale = pd.DataFrame([{"entry": entry.label, "reason": entry.reason} for entry in verdict.stale])
    unexpected = verdict.unexpected[["template", "mode", "shape", "chunking", "case_id", "divergence"]]
    body = [
        f"<h1>chatparity report: {escape(run.name)}</h1>",
        f"<p>{escape(stamp_line(run))}</p>",
        (
            f"<p>{t.rows} rows: match {escape(rate(status['match'], t.rows))}; "
            f"finished {escape(rate(*t.finished))}, partial {escape(rate(*t.partial))}; "
            f"mismatch {status['mismatch']}; known divergences {status['known divergence']}; "
            f"oracle errors {t.oracle_errors}; parser errors {t.parser_errors}; "
            f"unsupported {status['unsupported']}.</p>"
        ),
    ]
    if run.lost:
        body.append(f'<p class="strict">{len(run.lost)} sweep items failed; their rows are missing:</p>')
        body.append("<ul>" + "".join(f"<li>{escape(item)}</li>" for item in run.lost) + "</ul>")
    if verdict.strict_failures:
        body.append(
            f'<p class="strict">{len(unexpected)} unexpected matches and {len(stale)} stale known '
            "divergences: these fail the gate.</p>"
        )
    body += [
        "<h2>Match rate: template × chunking</h2>",
        heatmap(verdict.rows),
        "<h2>Distinct failures</h2>",
        frame_html(groups),
        "<h2>Stream check failures</h2>",
        frame_html(stream_groups(verdict.rows).drop(columns=["reply"])),
        "<h2>Examples by mismatch kind</h2>",
        examples(verdict.rows),
    ]
    for by, shown in tables.shown.items():
        body.append(f"<h2>Per {escape(by)}</h2>")
        for name, frame in shown.items():
            body += [f"<h3>{escape(name)}</h3>", frame_html(frame)]
    body += [
        "<h2>Unexpected matches</h2>",
        frame_html(unexpected),
        "<h2>Stale known divergences</h2>",
        frame_html(stale),
        "<h2>Where llama.cpp departs from the template's meaning</h2>",
        frame_html(defects.counts),
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>chatparity {escape(run.name)}</title><style>{STYLE}</style></head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )
