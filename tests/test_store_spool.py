"""The spool: rows appended as sessions finish, written to a store in key order whatever order they came in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from chatparity.model import Row
from harness import store

ROW = {"session_id": "s", "template": "t", "family": "f", "syntax": "x", "mode": "think/auto", "tools": "auto",
       "conversation": "single", "origin": "fuzz", "shape": "s", "partial": 0, "outcome": "match"}


def rows_of(item: str, keys: list[tuple[str, str]]) -> list[dict[str, object]]:
    """One item's rows, each detail naming the item and its place, so the row that wins a tie shows."""
    return [{**ROW, "case_id": case, "chunking": chunking, "detail": f"{item}#{place}"}
            for place, (case, chunking) in enumerate(keys)]


ITEMS = {
    "b": rows_of("b", [("c2", "whole"), ("c1", "char"), ("c3", "whole")]),
    "a": rows_of("a", [("c3", "whole"), ("c1", "whole"), ("c2", "whole")]),
    "c": rows_of("c", [("c0", "split"), ("c1", "char")]),
}


def stored(tmp_path: Path, order: list[str]) -> list[tuple[object, ...]]:
    """The store's rows, in the order it holds them, after spooling the items in `order`."""
    spool = store.Spool()
    try:
        for item in order:
            spool.add(item, Row, ITEMS[item])
        connection = store.connect(tmp_path / "-".join(order) / store.STORE_NAME)
        try:
            spool.write(connection)
        finally:
            connection.close()
    finally:
        spool.close()
    with sqlite3.connect(tmp_path / "-".join(order) / store.STORE_NAME) as connection:
        return connection.execute("SELECT rowid, case_id, chunking, detail FROM rows ORDER BY rowid").fetchall()


def test_the_store_holds_rows_in_key_order_whatever_order_the_items_arrived_in(tmp_path: Path) -> None:
    first = stored(tmp_path, ["b", "a", "c"])
    assert first == stored(tmp_path, ["c", "a", "b"]) == stored(tmp_path, ["a", "c", "b"])
    assert [(case, chunking) for _, case, chunking, _ in first] == [
        ("c0", "split"), ("c1", "char"), ("c1", "whole"), ("c2", "whole"), ("c3", "whole"),
    ]


def test_a_key_two_items_wrote_keeps_the_row_of_the_item_named_last(tmp_path: Path) -> None:
    details = {(case, chunking): detail for _, case, chunking, detail in stored(tmp_path, ["c", "b", "a"])}
    assert details[("c1", "char")] == "c#1"
    assert details[("c3", "whole")] == "b#2"
