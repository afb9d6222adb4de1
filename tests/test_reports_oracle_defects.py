"""Oracle defects: llama.cpp readings that depart from the truth, classified, clustered with reproducers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reports_store_builder import StoreBuilder

from reports.oracle_defects import Defect, classify_defect, defects_markdown, oracle_defects, signature
from reports.runs import load_run


def message(
    content: str = "", reasoning: str = "", calls: tuple[tuple[str, str], ...] = ()
) -> dict[str, object]:
    """A reading dict."""
    return {
        "content": content,
        "reasoning_content": reasoning,
        "tool_calls": [{"name": name, "arguments": arguments, "id": ""} for name, arguments in calls],
    }


CALL = (("get", '{"city": "Rio"}'),)


@pytest.mark.parametrize(
    ("oracle", "truth", "defect"),
    [
        ({"rejected": "no"}, message("hi"), Defect.REJECTS_OWN),
        (message("<tool_call>x"), message("", calls=CALL), Defect.LOSES_CALL),
        (message("", calls=CALL), message("hi"), Defect.INVENTS_CALL),
        (message("", calls=(("get", '{"city": '),)), message("", calls=CALL), Defect.INVALID_ARGUMENTS),
        (message("hi<|im_end|>"), message("hi"), Defect.MARKERS_IN_TEXT),
        (message("I think. Hi"), message("Hi", "I think."), Defect.MOVES_TEXT),
        (message("H"), message("Hi"), Defect.DROPS_TEXT),
        (message("", calls=(("get", '{"city": "Ri"}'),)), message("", calls=CALL), Defect.WRONG_CALL),
        (message("Hi", "I think.\n"), message("Hi", "I think."), Defect.WHITESPACE),
        (message("Hi!!"), message("Hi"), Defect.ALTERS_TEXT),
    ],
)
def test_defects_are_classified(oracle: dict[str, object], truth: dict[str, object], defect: Defect) -> None:
    assert classify_defect(oracle, truth) is defect


def defect_run(directory: Path) -> Path:
    """Three cases of a.jinja where llama.cpp loses a call (two short, one long), one where it agrees."""
    builder = StoreBuilder(directory)
    lost = json.dumps(message("<tool_call>…"))
    truth = json.dumps(message("", calls=CALL))
    for case, reply in (
        ("c1", "<tool_call>{...}</tool_call> and more"),
        ("c2", "<tool_call>{}"),
        ("c3", "<tc>"),
    ):
        for chunking in ("whole", "char"):
            builder.row(
                case,
                "a.jinja",
                chunking,
                "match",
                shape="call",
                oracle_vs_truth="calls",
                truth=truth,
                oracle_reading=lost,
                reply=reply,
            )
    builder.row("c4", "a.jinja", "whole", "match", shape="call", oracle_vs_truth="match", truth=truth)
    builder.row(
        "c5", "b.jinja", "whole", "match", shape="call", oracle_vs_truth="calls", truth=truth,
        oracle_reading=lost, reply="<tool_call>{}</tool_call>",
    )
    return builder.write()


def test_one_entry_per_distinct_defect_with_the_shortest_reproducer(tmp_path: Path) -> None:
    run = load_run(defect_run(tmp_path))
    report = oracle_defects(run)
    assert report.counts.to_dict(orient="records") == [
        {
            "defect": Defect.LOSES_CALL.value,
            "field": "tool_calls",
            "signature": "0 calls read, 1 written",
            "template": "a.jinja",
            "shape": "call",
            "cases": 3,
        },
        {
            "defect": Defect.LOSES_CALL.value,
            "field": "tool_calls",
            "signature": "0 calls read, 1 written",
            "template": "b.jinja",
            "shape": "call",
            "cases": 1,
        },
    ]
    assert len(report.clusters) == 1
    cluster = report.clusters.iloc[0]
    assert (cluster["cases"], cluster["case_id"], cluster["reply"]) == (4, "c3", "<tc>")
    assert cluster["templates"] == "a.jinja, b.jinja"
    text = defects_markdown(report, run)
    assert "llama.cpp commit `abc123` (as vendored by llama-cpp-python 0.3.36), reasoning format `deepseek`" in text
    assert "## 1. llama.cpp loses a call in tool_calls: 0 calls read, 1 written" in text
    assert "llama.cpp returned:" in text and "The template meant:" in text
    assert 'syntax = "json"\nshape = "call"\nkind = "calls"' in text
    assert f"`chatparity show c3 {run.directory}`" in text
    assert text.count("## ") == 1


def test_whitespace_defects_say_which_edge_differs() -> None:
    oracle, truth = message("Hi", "I think.\n"), message("Hi", "I think.")
    assert signature(Defect.WHITESPACE, "reasoning_content", oracle, truth) == "trailing '' read as '\\n'"
    assert signature(Defect.REJECTS_OWN, "the whole reply", {"rejected": "bad at 12"}, truth) == "error: bad at N"
