"""The check behind the equivalents "on the 70 pinned templates": a mutant of template analysis is told apart
from the unmutated parser exactly where a template's reader is built otherwise."""

from __future__ import annotations

import threading
from pathlib import Path

from corpora.catalog import plan
from reply.reader import open_reader
from reports.mutate import all_mutants
from reports.same_grammars import PROJECT, changed, described, fingerprint

LLAMA = "meta-llama-Llama-3.1-8B-Instruct.jinja"


def mutant_id(file: str, original: str, replacement_start: str, nth: int = 0) -> str:
    """The id of the `nth` mutant (in line order) of reply/`file` changing `original` into something starting
    so."""
    found = sorted((m for m in all_mutants(PROJECT / "reply", file) if m.original == original
                    and m.replacement.startswith(replacement_start)), key=lambda m: m.line)
    return found[nth].id


def unreached() -> str:
    """diff_split's second `ls[l1].value + suffix`: the branch where only the left side is left over, which no
    pinned template's renders take."""
    return mutant_id("analysis.py", "ls[l1].value + suffix", "(ls[l1].value - suffix)", nth=1)


def test_a_grammar_is_described_without_addresses_and_told_apart_by_mode() -> None:
    result: dict[str, object] = {}

    def build() -> None:
        sessions = {p.session.mode.label: p.session for p in plan("quick", templates=LLAMA)
                    if p.session.conversation == "single"}
        auto = open_reader(sessions["think/auto"]).arena.root
        result["text"] = described(auto)
        result["again"] = fingerprint(open_reader(sessions["think/auto"]).arena.root)
        result["auto"] = fingerprint(auto)
        result["parallel"] = fingerprint(open_reader(sessions["think/parallel"]).arena.root)

    threading.stack_size(1 << 27)
    worker = threading.Thread(target=build)
    worker.start()
    worker.join()
    assert " at 0x" not in str(result["text"]) and "Literal(literal='{')" in str(result["text"])
    assert result["again"] == result["auto"] != result["parallel"]


def test_a_mutant_changing_a_json_grammar_is_found_and_one_it_never_reaches_is_not() -> None:
    per_call = mutant_id("autoparser.py", "not fmt.section_start and fmt.per_call_start", "(not fmt.section_start or")
    differing = changed(per_call, LLAMA)
    assert {key.split(" ")[1] for key in differing} == {
        f"{thinking}/{tools}" for thinking in ("think", "nothink") for tools in ("auto", "parallel", "required")}
    assert changed(unreached(), LLAMA) == {}


def test_the_mutated_copy_leaves_the_working_tree_alone() -> None:
    before = (PROJECT / "reply" / "analysis.py").read_bytes()
    changed(unreached(), LLAMA)
    assert Path(PROJECT / "reply" / "analysis.py").read_bytes() == before
