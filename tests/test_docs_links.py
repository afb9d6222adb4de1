"""The README and docs/ link to files and headings that exist, so the front page leads somewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.markdown_links import anchors, relative_links

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_a_file_and_heading(document: Path) -> None:
    for target in relative_links(document):
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        assert linked.exists(), f"{document.name}: {target}: no such file"
        if anchor:
            assert anchor in anchors(linked), f"{document.name}: {target}: no such heading"


def test_the_front_page_stays_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert all(f"(docs/{page.name})" in readme for page in DOCUMENTS[1:])
