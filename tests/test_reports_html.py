"""The HTML page parses, holds the heatmap and failing examples, and escapes what the rows hold."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from reports_store_builder import MESSAGE, StoreBuilder

from reports.publish import write_report

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
    write_report(run)
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
