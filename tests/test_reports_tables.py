"""Tables, failure groups and summaries count a small hand-made store correctly."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pandas as pd
from reports_store_builder import StoreBuilder

from harness.known_divergences import KnownDivergences
from harness.policies import Policies
from reports.divergences import apply_expectations, classify_run
from reports.groups import detail_path, failure_groups, stream_groups
from reports.judgement import judge
from reports.runs import load_run
from reports.summary import summary_markdown, summary_text
from reports.tables import build_tables, markdown_pieces, markdown_table


def summarize(directory: Path) -> str:
    """The terminal summary of the run in `directory`, judged without a baseline."""
    run = load_run(directory)
    verdict = classify_run(run)
    return summary_text(run, verdict, judge(run, verdict, None))


def markdown_summary(directory: Path, report: str | None = None) -> str:
    """The markdown summary of the run in `directory`, judged without a baseline."""
    run = load_run(directory)
    verdict = classify_run(run)
    return summary_markdown(run, verdict, judge(run, verdict, None), report)


def small_run(directory: Path) -> Path:
    """Two families, whole and char rows: a calls mismatch, a partial content mismatch, a crash, a timeout."""
    builder = StoreBuilder(directory)
    builder.session("a.jinja", family="qwen", syntax="xml").session("b.jinja", family="llama", syntax="json")
    for case in ("c1", "c2", "c3"):
        for chunking in ("whole", "char"):
            mismatch = case == "c3"
            builder.row(
                case,
                "a.jinja",
                chunking,
                "mismatch" if mismatch else "match",
                "calls" if mismatch else "",
                detail="tool_calls[0].arguments.city @3: 'Rio' vs 'Ri'" if mismatch else "",
            )
    builder.row("c4", "b.jinja", "whole", "parser_crashed")
    builder.row("c5", "b.jinja", "whole", "match", partial=1)
    builder.row(
        "c5",
        "b.jinja",
        "char",
        "mismatch",
        "content",
        partial=1,
        monotonic=0,
        snapshot_parity=0,
        stream_detail="monotonic: content retracts @3",
    )
    builder.row("c6", "b.jinja", "whole", "oracle_timeout")
    return builder.write()


def classified(directory: Path) -> pd.DataFrame:
    """The rows of the small run with statuses (no known divergences)."""
    run = load_run(small_run(directory))
    return apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies()).rows


def test_family_counts_per_chunking_and_reply(tmp_path: Path) -> None:
    counts = build_tables(classified(tmp_path)).counts["family"].set_index(["family", "chunking", "reply"])
    assert counts.loc[("qwen", "whole", "finished"), ["rows", "match", "bug", "calls"]].tolist() == [
        3,
        2,
        1,
        1,
    ]
    assert counts.loc[("qwen", "char", "finished"), ["streamed", "consistent", "monotonic"]].tolist() == [
        3,
        3,
        3,
    ]
    llama_whole = counts.loc[("llama", "whole", "finished")]
    assert llama_whole[["rows", "match", "parser_crashed", "oracle_timeout"]].tolist() == [2, 0, 1, 1]
    partial_char = counts.loc[("llama", "char", "partial")]
    assert partial_char[
        ["rows", "content", "streamed", "monotonic", "snapshot_parity", "clean"]
    ].tolist() == [1, 1, 1, 0, 0, 1]
    assert counts["rows"].sum() == 10


def test_match_table_cells_keep_finished_and_partial_apart(tmp_path: Path) -> None:
    table = build_tables(classified(tmp_path)).shown["family"]["match"].set_index("family")
    assert table.at["qwen", "whole"] == "2/3 (66.7%)"
    assert table.at["llama", "whole"] == "0/2 (0.0%)"
    assert table.at["llama", "whole partial"] == "1/1 (100.0%)"
    assert table.at["llama", "char partial"] == "0/1 (0.0%)"
    assert table.at["qwen", "char partial"] == "–"
    assert table.at["(all)", "match"] == "5/10 (50.0%)"


def test_outcome_and_stream_tables_per_template(tmp_path: Path) -> None:
    tables = build_tables(classified(tmp_path)).shown["template"]
    outcomes = tables["outcomes"].set_index("template")
    assert outcomes.loc[
        "b.jinja", ["rows read", "match", "bug", "content", "oracle errors", "parser errors"]
    ].tolist() == [4, 1, 1, 1, 1, 1]
    assert outcomes.loc["(all)", ["calls", "policy", "llama.cpp defect"]].tolist() == [2, 0, 0]
    stream = tables["stream"].set_index("template")
    assert stream.at["b.jinja", "monotonic"] == "0/1"
    assert stream.at["(all)", "snapshot parity"] == "3/4"


def test_syntax_grouping(tmp_path: Path) -> None:
    counts = build_tables(classified(tmp_path)).counts["syntax"]
    assert dict(counts.groupby("syntax")["rows"].sum()) == {"json": 4, "xml": 6}


def test_failure_groups_fold_rows_that_fail_the_same_way(tmp_path: Path) -> None:
    groups = failure_groups(classified(tmp_path))
    calls = groups[groups["kind"] == "calls"].iloc[0]
    assert (calls["rows"], calls["cases"], calls["what"]) == (2, 1, "tool_calls[].arguments.city")
    assert calls["chunking"] == "whole"
    assert groups.iloc[0]["rows"] == 2
    assert set(groups["status"]) == {"mismatch", "parser error", "oracle error"}


def test_failure_groups_by_cell_are_each_cells_own_groups(tmp_path: Path) -> None:
    """Folding by template and chunking at once gives, cell by cell, what folding each cell alone gives."""
    builder = StoreBuilder(tmp_path / "cells")
    pick = random.Random(7)
    details = ["content @1: 'a' vs 'b'", "tool_calls[0].arguments.x @2: 'xy' vs 'x'", "reasoning_content @0: 'a' vs ''"]
    for number in range(120):
        template = pick.choice(["a.jinja", "b.jinja", "c.jinja"])
        chunking = pick.choice(["whole", "char", "split"])
        outcome = pick.choice(["mismatch", "mismatch", "parser_crashed", "match"])
        builder.row(f"c{number:03d}", template, chunking, outcome, "content" if outcome == "mismatch" else "",
                    detail=pick.choice(details) if outcome == "mismatch" else "",
                    reply="x" * pick.randint(1, 9), shape=pick.choice(["s1", "s2", "fuzz:seed=1:2"]))
    run = load_run(builder.write())
    rows = apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies()).rows
    cell = ["template", "chunking"]
    folded = failure_groups(rows, by=tuple(cell))
    assert len(folded) > 10
    for key, part in rows.groupby(cell):
        alone = failure_groups(part)
        together = folded[(folded["template"] == key[0]) & (folded["chunking"] == key[1])]
        pd.testing.assert_frame_equal(together.reset_index(drop=True), alone, check_dtype=False)


def test_stream_groups_fold_broken_invariants(tmp_path: Path) -> None:
    groups = stream_groups(classified(tmp_path))
    assert groups[["family", "what", "rows", "case_id"]].to_dict(orient="records") == [
        {"family": "llama", "what": "monotonic: content retracts @N", "rows": 1, "case_id": "c5"}
    ]
    assert "monotonic 1" in summarize(tmp_path)


def test_detail_path_keeps_rejection_reasons_apart() -> None:
    assert detail_path("content @3: 'a' vs 'b'") == "content"
    assert detail_path("tool_calls: 2 calls vs 1") == "tool_calls"
    assert detail_path("rejected: expected '}' at 12") == "rejected: expected '…' at N"


def test_markdown_table_escapes_pipes_and_newlines() -> None:
    text = markdown_table(pd.DataFrame({"a": ["x|y\nz"]}))
    assert "x\\|y⏎z" in text
    assert markdown_table(pd.DataFrame()) == "_none_"


def test_summaries_name_the_counts(tmp_path: Path) -> None:
    run = small_run(tmp_path)
    text = summarize(run)
    assert text.startswith("FAIL (no baseline): 0 regressions, 5 new failing rows")
    assert "rows 10 read (0 in sessions the parser declines left out): match 5/10 (50.0%)" in text
    assert "parser bug 3 (content 1, calls 2); errors: parser 1, llama.cpp 1" in text
    assert "streams: 4 streamed rows; 3 pass every check, 1 fail one" in text
    assert len(text.splitlines()) <= 24
    markdown = markdown_summary(run, report="https://example.test/report.html")
    assert markdown.splitlines()[2].startswith("**FAIL (no baseline)")
    assert "Full report: https://example.test/report.html" in markdown


def test_summaries_warn_of_lost_sweep_items(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path)
    builder.stamp["lost_items"] = ["sweep.json::a.jinja[think/auto|single]: AttributeError"]
    run = builder.row("c1", "a.jinja").write()
    assert "; 1 sweep items lost" in summarize(run).splitlines()[0]
    assert "1 sweep items lost" in markdown_summary(run).splitlines()[2]


def test_headlines_and_rates_leave_out_unsupported_rows(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path)
    builder.row("c1", "a.jinja", "whole", "match").row("c2", "a.jinja", "whole", "mismatch", "content")
    for case in ("u1", "u2", "u3"):
        builder.row(case, "declined.jinja", "whole", "unsupported")
    text = summarize(builder.write())
    assert "rows 2 read (3 in sessions the parser declines left out): match 1/2 (50.0%)" in text
    tables = build_tables(classify_run(load_run(tmp_path)).rows).shown["template"]
    assert tables["match"].set_index("template").at["declined.jinja", "match"] == "–"


def test_a_loaded_run_reads_as_pandas_reads_its_store_holding_each_repeated_text_once(
    tmp_path: Path,
) -> None:
    store = small_run(tmp_path)
    rows = load_run(store).rows
    with sqlite3.connect(store / "rows.sqlite") as connection:
        expected = pd.read_sql("SELECT * FROM rows ORDER BY case_id, chunking", connection)
    pd.testing.assert_frame_equal(rows, expected)
    templates = rows["template"].to_numpy(dtype=object)
    assert templates[0] == templates[1] and templates[0] is templates[1]


def test_a_table_made_in_pieces_is_laid_out_as_the_whole_table() -> None:
    cells = ["", "x", "東京 \"渋谷\"", "a|b", "tab\there", "line\nbreak", "é" * 40, "☀ café", "  padded  "]
    chosen = random.Random(7)
    frame = pd.DataFrame(
        {name: [chosen.choice(cells) for _ in range(23)] for name in ("a", "longer header", "東")}
    )
    whole = markdown_table(frame, 30)
    for piece_rows in (1, 2, 7, 23, 100):
        assert "\n".join(markdown_pieces(frame, 30, piece_rows)) == whole, piece_rows
    assert list(markdown_pieces(frame.iloc[:0])) == ["_none_"]
