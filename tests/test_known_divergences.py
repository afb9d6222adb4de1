"""Known divergences, the rare exceptions no policy's rule decides: read from the parser's expectations, applied
to each row as the sweep makes it, and checked against the run (an entry that accounts for nothing is stale)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reports_store_builder import StoreBuilder

from harness.known_divergences import UNEXPECTED, DivergenceFileError, KnownDivergences, load_divergences
from harness.policies import Policies, Policy
from reports.divergences import apply_expectations
from reports.runs import load_run
from reports.statuses import Status

ENTRY = 'name = "lost-calls"\nreason = "r"\nundecidable = "u"\n'


def entries(tmp_path: Path, text: str) -> KnownDivergences:
    """The entries of a known-divergences file with the given TOML body."""
    file = tmp_path / "known_divergences.toml"
    file.write_text(text, encoding="utf-8")
    return load_divergences(file)


def values(template: str = "a.jinja", shape: str = "lost", chunking: str = "whole") -> tuple[str, ...]:
    """A row's values of template, family, syntax, origin, shape, mode and chunking."""
    return (template, "qwen", "json", "roundtrip", shape, "nothink/none", chunking)


def test_an_entry_explains_the_rows_it_selects_of_its_kind_and_flags_those_that_match(tmp_path: Path) -> None:
    known = entries(tmp_path, f'[[divergence]]\ntemplate = "a.*"\nshape = "lost"\nkind = "calls"\n{ENTRY}')
    assert known.explain(values(), "calls") == "lost-calls"
    assert known.explain(values(), "content") == ""
    assert known.explain(values(shape="plain"), "calls") == ""
    assert known.explain(values(), "") == UNEXPECTED + "lost-calls"
    assert known.explain(values(template="b.jinja"), "") == ""


def test_globs_may_be_lists_and_the_first_entry_selecting_a_row_decides(tmp_path: Path) -> None:
    known = entries(
        tmp_path,
        f'[[divergence]]\ntemplate = ["x.jinja", "a.*"]\nchunking = "char"\nkind = "calls"\n{ENTRY}\n'
        '[[divergence]]\nsyntax = "json"\nkind = "content"\nname = "other"\nreason = "r"\nundecidable = "u"\n',
    )
    assert known.explain(values(chunking="char"), "calls") == "lost-calls"
    assert known.explain(values(chunking="char"), "content") == ""
    assert known.explain(values(chunking="whole"), "content") == "other"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f'[[divergence]]\nkind = "calls"\n{ENTRY}', "needs a template, family or syntax glob"),
        (f'[[divergence]]\ntemplate = "a"\nkind = "call"\n{ENTRY}', "kind 'call' is not one of"),
        ('[[divergence]]\ntemplate = "a"\nkind = "calls"\nname = "n"\nreason = "r"\n',
         "missing undecidable (say why no policy's rule can decide these rows)"),
        (f'[[divergence]]\ntemplate = "a"\nkind = "calls"\n{ENTRY}shap = "x"\n', "unknown keys ['shap']"),
        (f'[[divergence]]\ntemplate = "a"\nkind = "calls"\n{ENTRY}' * 2, "'lost-calls' is named twice"),
        (f'[[divergence]]\ntemplate = []\nkind = "calls"\n{ENTRY}', "template must be a non-empty glob"),
        ('[[divergences]]\ntemplate = "a"\n', "unknown top-level keys"),
        ("[[divergence]\n", "not valid TOML"),
    ],
)
def test_bad_entries_are_named_with_file_and_position(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(DivergenceFileError) as error:
        entries(tmp_path, body)
    assert message in str(error.value) and "known_divergences.toml" in str(error.value)


def labelled_run(directory: Path, complete: bool = False) -> Path:
    """a.jinja: a calls mismatch the entry 'lost-calls' explains and a match; b.jinja: a match, and a snapshot
    the policy 'holds' explains."""
    builder = StoreBuilder(directory)
    builder.stamp["selection"] = {"templates": None if complete else "*.jinja"}
    builder.session("a.jinja", family="qwen").session("b.jinja", family="llama")
    builder.row("c1", "a.jinja", "whole", "mismatch", "calls", shape="lost", explained="lost-calls")
    builder.row("c2", "a.jinja", "whole", "match", shape="plain")
    builder.row("c3", "b.jinja", "char", "match", shape="plain", parity_explained="holds=3")
    return builder.write()


def classified(tmp_path: Path, name: str, body: str, complete: bool = False, policies: Policies | None = None):
    """The run `labelled_run` makes, classified against the entries of `body` and `policies`."""
    run = load_run(labelled_run(tmp_path / name, complete))
    return apply_expectations(run.rows, run.sessions, entries(tmp_path, body), policies or Policies(), run.complete)


def test_rows_an_entry_explains_are_the_parsers_policy_and_the_entry_is_not_stale(tmp_path: Path) -> None:
    verdict = classified(tmp_path, "run", f'[[divergence]]\ntemplate = "a.*"\nkind = "calls"\n{ENTRY}')
    statuses = dict(zip(verdict.rows["case_id"], verdict.rows["status"]))
    assert statuses == {"c1": Status.POLICY.value, "c2": Status.MATCH.value, "c3": Status.MATCH.value}
    assert verdict.strict_failures == 0


def test_an_entry_that_explains_nothing_is_stale_where_it_selects_rows_or_the_run_is_complete(
    tmp_path: Path,
) -> None:
    selecting = classified(tmp_path, "a", '[[divergence]]\ntemplate = "b.*"\nkind = "calls"\n'
                                          'name = "idle"\nreason = "r"\nundecidable = "u"\n')
    assert [entry.name for entry in selecting.stale] == ["idle"]
    gone = f'[[divergence]]\ntemplate = "gone.jinja"\nkind = "calls"\n{ENTRY}'.replace("lost-calls", "gone")
    narrowed = classified(tmp_path, "b", gone)
    assert (len(narrowed.stale), len(narrowed.not_exercised)) == (0, 1)
    complete = classified(tmp_path, "c", gone, complete=True)
    assert (len(complete.stale), len(complete.not_exercised)) == (1, 0)


def test_a_policy_no_row_or_snapshot_names_is_stale_in_a_complete_run_only(tmp_path: Path) -> None:
    policies = Policies((Policy("holds", "held_arguments", "r", "d"), Policy("unused", "closed_arguments", "r", "d")))
    complete = classified(tmp_path, "a", "", complete=True, policies=policies)
    assert [policy.name for policy in complete.stale_policies] == ["unused"]
    assert complete.strict_failures == 1
    narrowed = classified(tmp_path, "b", "", policies=policies)
    assert ([policy.name for policy in narrowed.idle_policies], narrowed.strict_failures) == (["unused"], 0)


def test_a_matching_row_an_entry_selects_is_an_unexpected_match(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "run")
    builder.row("c2", "a.jinja", "whole", "match", explained=UNEXPECTED + "lost-calls")
    run = load_run(builder.write())
    verdict = apply_expectations(run.rows, run.sessions, KnownDivergences(), Policies())
    assert verdict.unexpected["case_id"].tolist() == ["c2"] and verdict.strict_failures == 1
