"""The HTML page parses, holds the heatmap and failing examples, and escapes what the rows hold."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from reports_store_builder import MESSAGE, StoreBuilder

from reports.publish import publish

VOID = frozenset({"meta", "br", "hr", "img", "input", "link"})


class Collector(HTMLParser):
    """Records start tags with their attributes, the text, and any tag left unclosed."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def page_of(tmp_path: Path) -> tuple[str, Collector]:
    """Write the report of a run with a hostile reply and parse its page."""
    builder = StoreBuilder(tmp_path / "run")
    hostile = "<script>alert(1)</script> & <b>"
    oracle = json.dumps({**MESSAGE, "content": "Hello <tool>"})
    parser = json.dumps({**MESSAGE, "content": "Hellx <tool>"})
    builder.row(
        "c1",
        "a.jinja",
        "whole",
        "mismatch",
        "content",
        reply=hostile,
        oracle_reading=oracle,
        parser_reading=parser,
        detail="content @4: 'o <tool>' vs 'x <tool>'",
    )
    builder.row("c1", "a.jinja", "char", "match")
    builder.row("c2", "b<i>.jinja", "whole", "mismatch", "calls", detail="tool_calls: 1 calls vs 0")
    builder.row("c3", "c.jinja", "whole", "unsupported")
    run = builder.write()
    publish(run)
    text = (run / "report.html").read_text(encoding="utf-8")
    collector = Collector()
    collector.feed(text)
    collector.close()
    return text, collector


def test_page_parses_with_every_tag_closed(tmp_path: Path) -> None:
    _, collector = page_of(tmp_path)
    assert collector.open == []
    assert not any(tag in {"script", "link"} for tag, _ in collector.tags)


def test_page_holds_the_heatmap_with_coloured_cells(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    assert ("table", {"class": "heatmap", "id": "heatmap"}) in collector.tags
    colours = [
        attrs["style"]
        for tag, attrs in collector.tags
        if tag == "td" and "hsl(" in (attrs.get("style") or "")
    ]
    assert "background:hsl(0, 70%, 78%)" in colours and "background:hsl(120, 70%, 78%)" in colours
    assert (
        '<tr><th>c.jinja</th><td style="background:#ddd" title="1 rows unsupported">unsupported</td>' in text
    )


def test_page_shows_an_example_per_kind_with_the_first_difference_marked(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    ids = {attrs.get("id") for _, attrs in collector.tags}
    assert {"examples-content", "examples-calls"} <= ids
    assert "content @4: &#x27;o &lt;tool&gt;&#x27; vs &#x27;x &lt;tool&gt;&#x27;" in text
    assert (
        "&quot;Hell<mark>o</mark> &lt;tool&gt;&quot;" in text
        and "&quot;Hell<mark>x</mark> &lt;tool&gt;" in text
    )


def test_page_escapes_replies_and_names(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in text
    assert "b<i>.jinja" in "".join(collector.text) and "<i>" not in text


def test_heatmap_cells_link_into_folded_sections_with_new_mismatches_first(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    links = [attrs["href"] for tag, attrs in collector.tags if tag == "a" and attrs.get("href")]
    assert "#cell--a.jinja--whole" in links
    target = text.index('<div id="cell--a.jinja--whole">')
    assert text.rfind("<details>", 0, target) > text.rfind("</details>", 0, target)
    sections = [attrs["id"] for tag, attrs in collector.tags if tag == "details" and attrs.get("id")]
    assert sections[:3] == ["new", "heatmap-section", "cells"]
    assert "chatparity show c1 " in text


def test_heatmap_leaves_out_unsupported_rows_and_shows_known_divergences_apart(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    builder.row("c1", "a.jinja", "whole", "match").row("c2", "a.jinja", "whole", "unsupported")
    builder.row("c3", "a.jinja", "whole", "mismatch", "content", shape="lost")
    entries = tmp_path / "known.toml"
    entries.write_text('[[divergence]]\ntemplate = "a.jinja"\nshape = "lost"\nkind = "content"\nreason = "r"\n')
    run = builder.write()
    publish(run, divergences=entries)
    text = (run / "report.html").read_text(encoding="utf-8")
    assert 'title="1/1 (100.0%) match; 1 known divergences; 1 unsupported"' in text
    assert "100%<br><small>+1 known</small>" in text
