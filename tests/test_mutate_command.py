"""`chatparity mutate`: mutants checked in temporary copies, by the sweep and gate or by a test command; the
source it mutates is never written."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from chatparity import cli
from harness.mutants import enclosing_function, mutants_of

PROJECT = Path(__file__).resolve().parent.parent
QWEN3 = "Qwen-Qwen3-0.6B.jinja"


def tree_digest(directory: Path) -> str:
    """A hash of every file under a directory (caches aside), by path and content."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def report(out: Path) -> dict[str, dict[str, object]]:
    """mutants.json's mutants by id."""
    data = json.loads((out / "mutants.json").read_text(encoding="utf-8"))
    return {mutant["id"]: mutant for mutant in data["mutants"]}


def frozen_reply(tmp_path: Path) -> Path:
    """A copy of the project's reply package to mutate."""
    reply = tmp_path / "frozen" / "reply_src"
    shutil.copytree(PROJECT / "reply", reply, ignore=shutil.ignore_patterns("__pycache__"))
    return reply


def check_one(reply: Path, file: str, mutant_id: str, out: Path) -> int:
    """`chatparity mutate` of one mutant of a frozen reply package over Qwen3; its exit status."""
    return cli.main([
        "mutate", "--source", str(reply), "--package", "reply", "--files", file, "--only", mutant_id,
        "--templates", QWEN3, "--out", str(out), "-j", "1",
    ])


def test_a_test_command_decides_mutants_of_any_language(tmp_path: Path) -> None:
    source = tmp_path / "parser"
    source.mkdir()
    (source / "read.mjs").write_text("const same = a == b;\nconst start = 0;\n", encoding="utf-8")
    before = tree_digest(source)
    out = tmp_path / "out"
    status = cli.main([
        "mutate", "--source", str(source), "--files", "*.mjs", "--out", str(out), "-j", "2",
        "--test-command", "grep -q 'a == b' {dir}/read.mjs",
    ])
    assert status == 1
    found = {mutant["label"].split(": ", 1)[0]: mutant["status"] for mutant in report(out).values()}
    assert found == {"read.mjs:1 compare": "killed", "read.mjs:2 constant": "survived"}
    assert tree_digest(source) == before
    markdown = (out / "mutants.md").read_text(encoding="utf-8")
    assert "## Survived mutants (1)" in markdown and "-const start = 0;\n+const start = 1;" in markdown


def test_known_equivalents_are_not_run(tmp_path: Path) -> None:
    source = tmp_path / "parser"
    source.mkdir()
    (source / "read.mjs").write_text("const start = 0;\n", encoding="utf-8")
    (mutant,) = mutants_of(source, source / "read.mjs")
    equivalents = tmp_path / "equivalents.toml"
    equivalents.write_text(f'[[equivalent]]\nid = "{mutant.id}"\nreason = "start is never read"\n', encoding="utf-8")
    out = tmp_path / "out"
    status = cli.main([
        "mutate", "--source", str(source), "--files", "*.mjs", "--out", str(out), "--equivalents",
        str(equivalents), "--test-command", "false",
    ])
    assert status == 0
    assert report(out)[mutant.id]["status"] == "equivalent"
    assert report(out)[mutant.id]["reason"] == "start is never read"


def test_wrong_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["mutate", "--source", str(tmp_path / "absent")]) == 2
    assert "no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["mutate", "--source", str(tmp_path / "empty"), "--list"]) == 2
    assert "no file matches" in capsys.readouterr().err


@pytest.mark.oracle
def test_a_python_mutant_of_a_frozen_copy_is_swept_from_a_copy_and_killed_by_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = frozen_reply(tmp_path)
    mutants = mutants_of(reply, reply / "syntaxes" / "hermes.py")
    build = next(m for m in mutants if m.operator == "return" and "autoparser.build" in m.original)
    before = tree_digest(reply)
    out = tmp_path / "out"
    status = check_one(reply, "hermes.py", build.id, out)
    assert status == 0
    checked = report(out)[build.id]
    assert checked["status"] == "killed" and checked["templates"] == QWEN3
    assert "regressions" in str(checked["reason"])
    assert (out / "baseline" / "outcomes.csv").is_file()
    function = enclosing_function((reply / build.file).read_text(encoding="utf-8"), build.line)
    assert QWEN3 in json.loads((out / "trace.json").read_text(encoding="utf-8"))[build.file][str(function)]
    assert "estimate: 1 mutants to sweep over 1.0 templates each" in capsys.readouterr().out
    assert tree_digest(reply) == before


@pytest.mark.oracle
def test_a_mutant_breaking_the_parsers_own_render_is_killed_by_the_rows_it_declines(tmp_path: Path) -> None:
    reply = frozen_reply(tmp_path)
    broken = next(
        m for m in mutants_of(reply, reply / "rendering.py")
        if m.operator == "return" and m.original == "return _compile(source).render(**context)"
    )
    out = tmp_path / "out"
    status = check_one(reply, "rendering.py", broken.id, out)
    checked = report(out)[broken.id]
    assert status == 0 and checked["status"] == "killed"
    assert "regressions" in str(checked["reason"]) and "unsupported" in str(checked["reason"])


@pytest.mark.oracle
def test_a_survivor_in_template_analysis_that_builds_every_reader_alike_is_equivalent(tmp_path: Path) -> None:
    reply = frozen_reply(tmp_path)
    unreached = sorted((m for m in mutants_of(reply, reply / "analysis.py") if m.original == "ls[l1].value + suffix"
                        and m.replacement.startswith("(ls[l1].value - suffix)")), key=lambda m: m.line)[1]
    out = tmp_path / "out"
    status = check_one(reply, "analysis.py", unreached.id, out)
    checked = report(out)[unreached.id]
    assert status == 0 and checked["status"] == "equivalent"
    assert "builds the reader of every session the full profile plans" in str(checked["reason"])


@pytest.mark.oracle
def test_a_mutant_that_loops_without_end_times_out_within_a_few_times_the_unmutated_sweep(tmp_path: Path) -> None:
    reply = frozen_reply(tmp_path)
    looping = next(m for m in mutants_of(reply, reply / "json_value.py") if m.operator == "condition"
                   and m.original == "pos < len(text) and text[pos] in SPACE")
    out = tmp_path / "out"
    status = check_one(reply, "json_value.py", looping.id, out)
    checked = report(out)[looping.id]
    assert status == 0 and checked["status"] == "timeout"
    limit = float(str(checked["reason"]).removeprefix("no verdict within ").removesuffix("s"))
    assert 60 <= limit < 1800
