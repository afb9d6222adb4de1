"""Known divergences: covered mismatches are known, covered matches are unexpected, idle entries are stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from reports_store_builder import StoreBuilder

from reports.divergences import DEFAULT_PATH, DivergenceFileError, classify_run, load_divergences
from reports.runs import load_run
from reports.statuses import Status


def write_entries(path: Path, text: str) -> Path:
    """A known-divergences file with the given TOML body."""
    file = path / "known.toml"
    file.write_text(text, encoding="utf-8")
    return file


def divergence_run(directory: Path, complete: bool = False) -> Path:
    """a.jinja: two calls mismatches (shape 'lost') and a match (shape 'plain'); b.jinja: one match."""
    builder = StoreBuilder(directory)
    builder.stamp["selection"] = {"templates": None if complete else "*.jinja"}
    builder.session("a.jinja", family="qwen").session("b.jinja", family="llama")
    builder.row("c1", "a.jinja", "whole", "mismatch", "calls", shape="lost")
    builder.row("c1", "a.jinja", "char", "mismatch", "calls", shape="lost")
    builder.row("c2", "a.jinja", "whole", "match", shape="plain")
    builder.row("c3", "b.jinja", "whole", "match", shape="plain")
    return builder.write()


def test_covered_mismatches_are_known_divergences(tmp_path: Path) -> None:
    file = write_entries(
        tmp_path, '[[divergence]]\ntemplate = "a.*"\nshape = "lost"\nkind = "calls"\nreason = "r"\n'
    )
    verdict = classify_run(load_run(divergence_run(tmp_path)), file)
    statuses = dict(zip(verdict.rows["case_id"] + "/" + verdict.rows["chunking"], verdict.rows["status"]))
    assert statuses == {
        "c1/whole": Status.KNOWN.value,
        "c1/char": Status.KNOWN.value,
        "c2/whole": Status.MATCH.value,
        "c3/whole": Status.MATCH.value,
    }
    assert verdict.strict_failures == 0
    assert set(verdict.rows.loc[verdict.rows["status"] == Status.KNOWN.value, "divergence"]) == {
        "#1 (template=a.*, shape=lost; calls)"
    }


def test_a_covered_row_that_matches_is_an_unexpected_match(tmp_path: Path) -> None:
    file = write_entries(tmp_path, '[[divergence]]\nfamily = "qwen"\nkind = "calls"\nreason = "r"\n')
    verdict = classify_run(load_run(divergence_run(tmp_path)), file)
    assert verdict.unexpected["case_id"].tolist() == ["c2"]
    assert verdict.strict_failures == 1


def test_an_entry_of_another_kind_leaves_the_mismatch_unexplained(tmp_path: Path) -> None:
    file = write_entries(
        tmp_path, '[[divergence]]\ntemplate = "a.jinja"\nshape = "lost"\nkind = "content"\nreason = "r"\n'
    )
    verdict = classify_run(load_run(divergence_run(tmp_path)), file)
    assert set(verdict.rows.loc[verdict.rows["case_id"] == "c1", "status"]) == {Status.MISMATCH.value}
    assert [entry.number for entry in verdict.stale] == [1]


def test_entries_for_templates_outside_a_narrowed_run_are_not_exercised(tmp_path: Path) -> None:
    file = write_entries(tmp_path, '[[divergence]]\ntemplate = "gone.jinja"\nkind = "calls"\nreason = "r"\n')
    narrowed = classify_run(load_run(divergence_run(tmp_path / "narrow")), file)
    assert (len(narrowed.stale), len(narrowed.not_exercised)) == (0, 1)
    complete = classify_run(load_run(divergence_run(tmp_path / "all", complete=True)), file)
    assert (len(complete.stale), len(complete.not_exercised)) == (1, 0)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[divergence]]\nkind = "calls"\nreason = "r"\n', "needs a template, family or syntax glob"),
        ('[[divergence]]\ntemplate = "a"\nkind = "call"\nreason = "r"\n', "kind 'call' is not one of"),
        ('[[divergence]]\ntemplate = "a"\nkind = "calls"\n', "missing reason"),
        (
            '[[divergence]]\ntemplate = "a"\nkind = "calls"\nreason = "r"\nshap = "x"\n',
            "unknown keys ['shap']",
        ),
        ('[[divergences]]\ntemplate = "a"\n', "unknown top-level keys"),
        ("[[divergence]\n", "not valid TOML"),
    ],
)
def test_bad_entries_are_named_with_file_and_position(tmp_path: Path, body: str, message: str) -> None:
    file = write_entries(tmp_path, body)
    with pytest.raises(DivergenceFileError) as error:
        load_divergences(file)
    assert message in str(error.value) and str(file) in str(error.value)


def test_the_committed_file_loads() -> None:
    assert all(entry.reason for entry in load_divergences(DEFAULT_PATH))


def test_one_entry_covers_a_class_by_syntax_or_a_list_of_templates(tmp_path: Path) -> None:
    by_syntax = write_entries(
        tmp_path, '[[divergence]]\nsyntax = "json"\nshape = "lost"\nkind = "calls"\nreason = "r"\n'
    )
    verdict = classify_run(load_run(divergence_run(tmp_path / "a")), by_syntax)
    assert (verdict.rows["status"] == Status.KNOWN.value).sum() == 2 and verdict.strict_failures == 0
    listed = write_entries(
        tmp_path,
        '[[divergence]]\ntemplate = ["x.jinja", "a.*"]\nshape = "lost"\nkind = "calls"\nreason = "r"\n',
    )
    verdict = classify_run(load_run(divergence_run(tmp_path / "b")), listed)
    assert set(verdict.rows.loc[verdict.rows["status"] == Status.KNOWN.value, "divergence"]) == {
        "#1 (template=x.jinja|a.*, shape=lost; calls)"
    }


def test_a_glob_list_must_hold_strings(tmp_path: Path) -> None:
    file = write_entries(tmp_path, '[[divergence]]\ntemplate = []\nkind = "calls"\nreason = "r"\n')
    with pytest.raises(DivergenceFileError, match="template must be a non-empty glob string or a list of them"):
        load_divergences(file)


def test_an_entry_for_a_shape_this_profile_does_not_make_is_idle_but_a_gone_template_is_stale(
    tmp_path: Path,
) -> None:
    file = write_entries(
        tmp_path,
        '[[divergence]]\ntemplate = "a.jinja"\nshape = "full-only"\nkind = "calls"\nreason = "r"\n\n'
        '[[divergence]]\ntemplate = "gone.jinja"\nkind = "calls"\nreason = "r"\n',
    )
    verdict = classify_run(load_run(divergence_run(tmp_path, complete=True)), file)
    assert [entry.number for entry in verdict.not_exercised] == [1]
    assert [entry.number for entry in verdict.stale] == [2]
