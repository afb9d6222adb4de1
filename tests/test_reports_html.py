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


def test_page_opens_with_the_verdict(tmp_path: Path) -> None:
    text, _ = page_of(tmp_path)
    body = text.split("<body>", 1)[1]
    assert body.index('<p class="fail">FAIL (no baseline): 0 regressions, 2 new failing rows') < body.index("<details")


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


def test_page_shows_an_example_per_kind_with_the_differing_field_marked(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    ids = {attrs.get("id") for _, attrs in collector.tags}
    assert {"examples-content", "examples-calls"} <= ids
    assert "content @4: &#x27;o &lt;tool&gt;&#x27; vs &#x27;x &lt;tool&gt;&#x27;" in text
    assert (
        '<tr class="differs"><th>content</th><td><pre>Hell<mark>o</mark> &lt;tool&gt;</pre></td>'
        "<td><pre>Hell<mark>x</mark> &lt;tool&gt;</pre></td></tr>"
    ) in text
    assert "<tr><th>reasoning_content</th>" in text, "a field that agrees is shown, not marked"


def test_the_mark_lands_on_the_arguments_that_differ_not_on_an_earlier_field(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    call = {"name": "f", "arguments": '{"city": "Rio"}', "id": ""}
    oracle = json.dumps({**MESSAGE, "reasoning_content": "r", "tool_calls": [call]})
    parser = json.dumps({**MESSAGE, "reasoning_content": "r", "tool_calls": [{**call, "arguments": '{"city": "Rim"}'}]})
    builder.row("c1", "a.jinja", "whole", "mismatch", "calls", oracle_reading=oracle, parser_reading=parser,
                detail="tool_calls[0].arguments.city @2: 'Rio' vs 'Rim'")
    run = builder.write()
    publish(run)
    text = (run / "report.html").read_text(encoding="utf-8")
    assert '<tr class="differs"><th>tool_calls[0].arguments</th>' in text
    assert "Ri<mark>o</mark>" in text and "Ri<mark>m</mark>" in text
    assert "<tr><th>reasoning_content</th><td><pre>r</pre></td><td><pre>r</pre></td></tr>" in text


def test_page_escapes_replies_and_names(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in text
    assert "b<i>.jinja" in "".join(collector.text) and "<i>" not in text


def test_heatmap_cells_link_to_the_title_of_their_rows_with_failing_rows_first(tmp_path: Path) -> None:
    text, collector = page_of(tmp_path)
    links = [attrs["href"] for tag, attrs in collector.tags if tag == "a" and attrs.get("href")]
    assert "#cell--a.jinja--whole" in links
    target = text.index('<h3 id="cell--a.jinja--whole">a.jinja · whole: 1 rows differ or fail')
    assert text.rfind('<details id="cells">', 0, target) > text.rfind("</details>", 0, target)
    sections = [attrs["id"] for tag, attrs in collector.tags if tag == "details" and attrs.get("id")]
    assert sections[:3] == ["failing", "heatmap-section", "cells"]
    assert "chatparity show c1 " in text


def test_a_stream_that_fails_while_its_final_reading_matches_reaches_the_heatmap(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    builder.row("c1", "a.jinja", "char", "match", snapshot_parity=0, parity_breaks=2,
                stream_detail="snapshot_parity: after prefix 3: content @0: 'a' vs 'b'")
    run = builder.write()
    publish(run)
    text = (run / "report.html").read_text(encoding="utf-8")
    assert '<a href="#cell--a.jinja--char">0%<br><small>1 fail</small></a>' in text


def test_heatmap_leaves_out_unsupported_rows_and_notes_policy_and_defect_rows_apart(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    builder.row("c1", "a.jinja", "whole", "match").row("c2", "a.jinja", "whole", "unsupported")
    builder.row("c3", "a.jinja", "whole", "mismatch", "content", explained="holds-marker-starts")
    builder.row("c4", "a.jinja", "whole", "mismatch", "calls", explained="llama.cpp:empty_read")
    run = builder.write()
    publish(run)
    text = (run / "report.html").read_text(encoding="utf-8")
    assert 'title="3/3 (100.0%) pass (final reading and streams); 1 parser policy; 1 llama.cpp defect; ' in text
    assert "100%<br><small>1 policy</small><br><small>1 llama.cpp</small>" in text
