"""The peer matrix written out: markdown for a pull request (agreement first), one HTML page shaded by
agreement with each parser linked to its run's own report, and JSON with every count."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any

from peers.matrix import ACCEPTS, CLASS_TITLES, CLASSES, FINAL, OFF_GRAMMAR, VERDICT_TITLES, VERDICTS, Column


def agreement(counts: Counter[str], final: bool = False) -> str:
    """'percent (matched/judged)' of a cell, '' when it holds no judged row; with `final`, also the share of
    rows whose final reading matches, stream checks aside."""
    judged = sum(counts[name] for name in VERDICTS)
    if not judged:
        return ""
    shown = f"{100 * counts['match'] / judged:.0f}% ({counts['match']}/{judged})"
    return shown + f"; final {100 * counts[FINAL] / judged:.0f}%" if final else shown


def syntaxes(columns: Iterable[Column]) -> list[str]:
    """Every syntax any column has rows of, sorted."""
    return sorted({syntax for column in columns for syntax, _ in column.cells})


def markdown(columns: list[Column], reproducers: dict[str, dict[str, str]]) -> str:
    """The matrix as markdown: agreement per parser and chunking class first, then per syntax, rows per label,
    declined templates and bug classes with their reproducers."""
    lines = ["# Peer matrix: agreement with llama.cpp", ""]
    lines += [
        "| parser | version | " + " | ".join(CLASS_TITLES[klass] for klass in CLASSES) + " | bug classes |",
        "|---|---|" + "---|" * len(CLASSES) + "---|",
    ]
    for column in columns:
        cells = (
            [agreement(column.total(klass), klass != "whole") for klass in CLASSES]
            if not column.status
            else [column.status] + [""] * (len(CLASSES) - 1)
        )
        lines.append(
            f"| {column.name} | {column.version} | " + " | ".join(cells) + f" | {len(column.bugs)} |"
        )
    lines += [
        "",
        "Agreement is matching rows over rows judged (match, parser policy, llama.cpp defect, parser bug);",
        "declined sessions and rows where llama.cpp itself failed are not judged. A streamed row matches",
        "when its final reading and every snapshot agree with llama-server's; `final` counts the rows whose",
        "final reading matches or differs only as a policy or a llama.cpp defect explains, stream checks",
        "aside.",
        "The quick profile streams by tokens only the tool-call, round-trip and thinking shapes of some tool",
        "modes, so its token-streamed rows are harder replies than its whole ones. A bug on a finished reply",
        "that llama.cpp's grammar for the request rejects or cannot end is counted apart (off llama.cpp's",
        "grammar): a served model under that grammar would not write it.",
        "",
        "## Per syntax",
        "",
    ]
    names = [column for column in columns if not column.status]
    header = [f"{column.name} {CLASS_TITLES[klass]}" for column in names for klass in CLASSES]
    lines += ["| syntax | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    for syntax in syntaxes(names):
        cells = [agreement(column.total(klass, syntax)) for column in names for klass in CLASSES]
        lines.append(f"| {syntax} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Rows per label",
        "",
        "| parser | chunking | "
        + " | ".join(VERDICT_TITLES.values())
        + " | of the bugs: llama.cpp rejects the reply | of the bugs: off llama.cpp's grammar |",
        "|---|---|" + "---|" * (len(VERDICTS) + 2),
    ]
    for column in names:
        for klass in CLASSES:
            counts = column.total(klass)
            lines.append(
                f"| {column.name} | {CLASS_TITLES[klass]} | "
                + " | ".join(str(counts[name]) for name in (*VERDICTS, ACCEPTS, OFF_GRAMMAR))
                + " |"
            )
    for column in columns:
        lines += ["", f"## {column.name}", ""]
        if column.status:
            lines += [f"Not run: {column.status}"]
            continue
        if column.declined:
            lines += ["Declined (not counted):", ""]
            lines += [
                f"- `{template}` ({column.declined_modes(template, modes)}): {why}"
                for (template, why), modes in sorted(column.declined.items())
            ]
            lines.append("")
        bugs = sorted(column.bugs.values(), key=lambda bug: (-bug.rows, bug.signature))
        streaming = sum(bug.streaming_only for bug in bugs)
        lines += [
            f"{len(bugs)} parser-bug classes ({streaming} streaming-only: every reply of the class is read "
            "whole without a bug)" + (":" if bugs else "."),
            "",
        ]
        for bug in bugs:
            example = bug.example
            lines += [
                f"### `{bug.signature}`: {bug.rows} rows"
                + (" (streaming-only)" if bug.streaming_only else ""),
                "",
                (
                    f"`chatparity show {example.case_id} {column.run}` ({example.template}, {example.mode}, "
                    f"{example.chunking})"
                ),
                "",
            ]
            code = reproducers.get(column.name, {}).get(bug.signature)
            if code:
                lines += ["```python", code.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def as_json(columns: list[Column], reproducers: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The matrix as JSON: every count, declined template and bug class."""
    return {
        "parsers": [
            {
                "name": column.name,
                "version": column.version,
                "status": column.status,
                "run": column.run,
                "cells": [
                    {
                        "syntax": syntax,
                        "chunking": klass,
                        **{name: counts[name] for name in (*VERDICTS, ACCEPTS, OFF_GRAMMAR, FINAL)},
                    }
                    for (syntax, klass), counts in sorted(column.cells.items())
                ],
                "totals": {
                    klass: {
                        name: column.total(klass)[name] for name in (*VERDICTS, ACCEPTS, OFF_GRAMMAR, FINAL)
                    }
                    for klass in CLASSES
                },
                "declined": [
                    {"template": template, "reason": why, "modes": sorted(modes)}
                    for (template, why), modes in sorted(column.declined.items())
                ],
                "bugs": [
                    {
                        "signature": bug.signature,
                        "rows": bug.rows,
                        "streaming_only": bug.streaming_only,
                        "case": bug.example.case_id,
                        "template": bug.example.template,
                        "chunking": bug.example.chunking,
                        "reproducer": reproducers.get(column.name, {}).get(bug.signature, ""),
                    }
                    for bug in sorted(column.bugs.values(), key=lambda bug: (-bug.rows, bug.signature))
                ],
            }
            for column in columns
        ]
    }


def html_page(columns: list[Column], reproducers: dict[str, dict[str, str]]) -> str:
    """The matrix as one HTML page: agreement per parser, syntax and chunking class, each parser linked to its
    run's own report (every difference, with its `chatparity show` command), each bug class with its show
    command and reproducer."""
    judged = [column for column in columns if not column.status]
    head = "".join(
        f"<th>{escape(column.name)} {CLASS_TITLES[klass]}</th>" for column in judged for klass in CLASSES
    )
    rows = [
        f"<tr><th>all</th>{''.join(cell(column.total(klass)) for column in judged for klass in CLASSES)}</tr>"
    ]
    rows += [
        f"<tr><th>{escape(syntax)}</th>"
        + "".join(cell(column.total(klass, syntax)) for column in judged for klass in CLASSES)
        + "</tr>"
        for syntax in syntaxes(judged)
    ]
    parts = [
        "<!doctype html><meta charset='utf-8'><title>Peer matrix</title>",
        "<style>td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:collapse}</style>",
        "<h1>Peer matrix: agreement with llama.cpp</h1>",
        "<ul>",
    ]
    parts += [
        f"<li>{escape(column.name)} {escape(column.version)}: "
        + (
            escape(column.status)
            if column.status
            else f"<a href='{escape(column.run)}/report.html'>every difference</a>"
        )
        + "</li>"
        for column in columns
    ]
    parts += ["</ul>", f"<table><tr><th>syntax</th>{head}</tr>{''.join(rows)}</table>"]
    for column in judged:
        bugs = sorted(column.bugs.values(), key=lambda bug: (-bug.rows, bug.signature))
        parts.append(f"<h2>{escape(column.name)}: {len(bugs)} parser-bug classes</h2>")
        for bug in bugs:
            parts.append(
                f"<h3>{escape(bug.signature)}: {bug.rows} rows</h3><code>"
                f"{escape(f'chatparity show {bug.example.case_id} {column.run}')}</code>"
            )
            code = reproducers.get(column.name, {}).get(bug.signature)
            if code:
                parts.append(f"<pre>{escape(code)}</pre>")
    return "\n".join(parts) + "\n"


def cell(counts: Counter[str]) -> str:
    """One table cell: the agreement, shaded by it."""
    judged = sum(counts[name] for name in VERDICTS)
    if not judged:
        return "<td></td>"
    share = counts["match"] / judged
    return f"<td style='background:hsl({int(120 * share)},60%,85%)'>{escape(agreement(counts))}</td>"


def write(out: Path, columns: list[Column], reproducers: dict[str, dict[str, str]]) -> tuple[Path, Path]:
    """peers.md, peers.html and peers.json under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    text, data = out / "peers.md", out / "peers.json"
    text.write_text(markdown(columns, reproducers), encoding="utf-8")
    (out / "peers.html").write_text(html_page(columns, reproducers), encoding="utf-8")
    data.write_text(
        json.dumps(as_json(columns, reproducers), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return text, data
