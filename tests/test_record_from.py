"""Records made from their columns at once: the same records the constructors make, and the same refusals."""

from __future__ import annotations

import dataclasses

import pytest

from chatparity.model import Row, SessionRecord, columns, record_from

ROW = {"case_id": "c", "chunking": "whole", "session_id": "s", "template": "t", "family": "f", "syntax": "x",
       "mode": "think/auto", "tools": "auto", "conversation": "single", "origin": "fuzz", "shape": "s",
       "partial": 0, "outcome": "match"}


def test_a_row_from_its_required_columns_equals_the_constructed_row_with_every_default() -> None:
    made = record_from(Row, ROW)
    assert made == Row(**ROW)
    assert [getattr(made, name) for name in columns(Row)] == [getattr(Row(**ROW), name) for name in columns(Row)]
    assert made.kind == "" and made.consistent is None and made.error == ""


def test_given_columns_override_the_defaults() -> None:
    made = record_from(Row, {**ROW, "kind": "content", "clean": 0, "error": "boom"})
    assert (made.kind, made.clean, made.error) == ("content", 0, "boom")
    assert made == Row(**ROW, kind="content", clean=0, error="boom")


def test_the_record_stays_frozen() -> None:
    made = record_from(Row, ROW)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.outcome = "mismatch"  # type: ignore[misc]


def test_an_unknown_column_is_named() -> None:
    with pytest.raises(ValueError, match="Row: unknown columns bogus, other"):
        record_from(Row, {**ROW, "other": 1, "bogus": 2})


def test_a_missing_column_without_a_default_is_named() -> None:
    without = {name: value for name, value in ROW.items() if name not in ("outcome", "template")}
    with pytest.raises(ValueError, match="Row: missing columns outcome, template"):
        record_from(Row, without)


def test_a_session_record_is_made_alike() -> None:
    fields = dataclasses.fields(SessionRecord)
    data = {item.name: f"v{index}" if item.type in ("str", str) else 0 for index, item in enumerate(fields)
            if item.default is dataclasses.MISSING}
    assert record_from(SessionRecord, data) == SessionRecord(**data)
