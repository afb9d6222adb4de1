"""The record of which llama.cpp defects are open or fixed upstream names real families and a known status."""

from __future__ import annotations

import tomllib

from reports.upstream import STATUS_FILE, checked, upstream_status
from templates.index import load_index


def test_every_entry_names_a_family_of_the_index_and_open_or_fixed() -> None:
    entries = tomllib.loads(STATUS_FILE.read_text(encoding="utf-8"))["entry"]
    families = {entry.family for entry in load_index().values()}
    assert entries and all(entry["family"] in families for entry in entries)
    assert all(entry["status"] in ("open", "fixed") and entry["evidence"] and entry["construct"] for entry in entries)
    assert len(checked()) == len(entries)


def test_an_entry_not_checked_says_so() -> None:
    assert upstream_status("Qwen3", "moves text", "reasoning read as content").startswith("not checked")
    family, kind, construct = next(iter(checked()))
    assert upstream_status(family, kind, construct).startswith(("open in ", "fixed in "))
    assert upstream_status(family, kind, "another construct").startswith("not checked")
