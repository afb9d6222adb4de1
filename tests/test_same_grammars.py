"""The check behind the equivalents "on the 70 pinned templates": a mutant of template analysis is told apart
from the unmutated parser exactly where a template's reader is built otherwise."""

from __future__ import annotations

import threading
from pathlib import Path

from corpora.catalog import plan
from harness.mutants import Mutant
from reply.fingerprint import described, fingerprint
from reply.reader import open_reader
from reports.built_alike import analyses_template, built_alike
from reports.mutate import all_mutants
from reports.same_grammars import PROJECT, changed

LLAMA = "meta-llama-Llama-3.1-8B-Instruct.jinja"
SOURCE = PROJECT / "reply"


def mutant_of(file: str, original: str, replacement_start: str, nth: int = 0) -> Mutant:
    """The `nth` mutant (in line order) of reply/`file` changing `original` into something starting so."""
    found = sorted((m for m in all_mutants(SOURCE, file) if m.original == original
                    and m.replacement.startswith(replacement_start)), key=lambda m: m.line)
    return found[nth]


def unreached() -> Mutant:
    """diff_split's second `ls[l1].value + suffix`: the branch where only the left side is left over, which no
    pinned template's renders take."""
    return mutant_of("analysis.py", "ls[l1].value + suffix", "(ls[l1].value - suffix)", nth=1)


def per_call() -> Mutant:
    """The autoparser's choice of calls in one section or each call in its own."""
    return mutant_of("autoparser.py", "not fmt.section_start and fmt.per_call_start", "(not fmt.section_start or")


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
    differing = changed(per_call(), SOURCE, LLAMA, "quick")
    assert {key.split(" ")[1] for key in differing} == {
        f"{thinking}/{tools}" for thinking in ("think", "nothink") for tools in ("auto", "parallel", "required")}
    assert changed(unreached(), SOURCE, LLAMA, "quick") == {}


def test_the_mutated_copy_leaves_the_working_tree_alone() -> None:
    before = (SOURCE / "analysis.py").read_bytes()
    changed(unreached(), SOURCE, LLAMA, "quick")
    assert Path(SOURCE / "analysis.py").read_bytes() == before


def test_template_analysis_is_told_from_code_that_builds_grammars_from_tools_or_reads_parses() -> None:
    detect = mutant_of("syntaxes/command_r_plus.py", '"Action:"', "(")
    to_json = mutant_of("syntaxes/gemma4.py", "node.end <= node.start", "(node.end > node.start)")
    bool_values = mutant_of("syntaxes/qwen3_coder.py", '"boolean" in types', "(")
    literal = mutant_of("peg.py", "text.startswith(lit, start)", "not")
    assert analyses_template(detect, SOURCE) and analyses_template(unreached(), SOURCE)
    assert not any(analyses_template(m, SOURCE) for m in (to_json, bool_values, literal, per_call()))


def test_only_template_analysis_that_builds_every_reader_alike_is_equivalent() -> None:
    mutants = [unreached(), per_call(), mutant_of("routes.py", "return AUTOPARSER", "return None")]
    assert built_alike(mutants, SOURCE, PROJECT, jobs=2, templates=LLAMA) == {mutants[0].id}
