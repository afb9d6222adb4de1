"""The template index: it matches the upstream files, the check catches changes, rebuilding reproduces it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from oracle.index_build import FamiliesError, build_index, load_families
from oracle.template_commands import main as templates_main
from templates.check import check_templates
from templates.index import (
    INDEX_PATH,
    IndexFileError,
    dumps_index,
    index_hash,
    load_index,
    read_template,
    sha256_text,
    template_source,
    templates_dir,
)


@pytest.fixture()
def upstream_copy(tmp_path: Path) -> Path:
    """A private copy of the pinned upstream templates directory."""
    target = tmp_path / "templates"
    shutil.copytree(templates_dir(), target)
    return target


def test_index_matches_every_upstream_file() -> None:
    index = load_index()
    upstream = sorted(templates_dir().glob("*.jinja"))
    assert sorted(index) == [path.name for path in upstream]
    for path in upstream:
        assert index[path.name].sha256 == sha256_text(read_template(path)), path.name
    assert check_templates(index, templates_dir()).ok


def test_check_reports_changed_added_and_removed(upstream_copy: Path) -> None:
    changed = upstream_copy / "Qwen-Qwen3-0.6B.jinja"
    changed.write_text(read_template(changed) + "{# edited #}", encoding="utf-8")
    (upstream_copy / "GLM-4.6.jinja").unlink()
    (upstream_copy / "New-Model.jinja").write_text("{{ messages }}", encoding="utf-8")
    report = check_templates(load_index(), upstream_copy)
    assert report.changed == ("Qwen-Qwen3-0.6B.jinja",)
    assert report.removed == ("GLM-4.6.jinja",)
    assert report.added == ("New-Model.jinja",)
    assert not report.ok


def test_check_command_fails_on_a_hash_mismatch(
    upstream_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert templates_main(["check", "--dir", str(upstream_copy)]) == 0
    edited = upstream_copy / "openai-gpt-oss-120b.jinja"
    edited.write_text(read_template(edited).replace("<|start|>", "<|begin|>", 1), encoding="utf-8")
    assert templates_main(["check", "--dir", str(upstream_copy)]) == 1
    assert "changed (sha256 differs from the index): openai-gpt-oss-120b.jinja" in capsys.readouterr().out


def test_list_command_shows_family_syntax_and_kwargs(capsys: pytest.CaptureFixture[str]) -> None:
    assert templates_main([]) == 0
    out = capsys.readouterr().out
    gpt_oss = next(line for line in out.splitlines() if line.startswith("openai-gpt-oss-120b.jinja"))
    assert "gpt-oss" in gpt_oss and "gpt_oss" in gpt_oss and "reasoning_effort=low|high" in gpt_oss
    assert f"{len(load_index())} templates" in out


def test_rebuild_reproduces_the_committed_index(oracle: object) -> None:
    entries = build_index(templates_dir(), oracle)
    assert dumps_index(entries) == INDEX_PATH.read_text(encoding="utf-8")


def test_families_table_must_cover_the_upstream_set(upstream_copy: Path, oracle: object) -> None:
    (upstream_copy / "New-Model.jinja").write_text("{{ messages }}", encoding="utf-8")
    with pytest.raises(FamiliesError, match="New-Model.jinja"):
        build_index(upstream_copy, oracle)
    (upstream_copy / "New-Model.jinja").unlink()
    (upstream_copy / "GLM-4.6.jinja").unlink()
    with pytest.raises(FamiliesError, match="GLM-4.6.jinja"):
        build_index(upstream_copy, oracle)


def test_kwargs_are_the_user_settable_variables_each_template_reads() -> None:
    index = load_index()
    kwargs = {name: dict(entry.kwargs) for name, entry in index.items()}
    assert kwargs["openai-gpt-oss-120b.jinja"] == {"reasoning_effort": ("low", "high")}
    assert kwargs["deepseek-ai-DeepSeek-V3.1.jinja"] == {"thinking": (True,)}
    assert kwargs["Qwen-Qwen3-0.6B.jinja"] == {}
    table = load_families()["kwargs"]
    for name, entry in index.items():
        source = template_source(name)
        for key, values in entry.kwargs:
            assert key in source and list(values) == table[key]


def test_thinking_tags_and_end_of_turn_come_from_the_template() -> None:
    index = load_index()
    qwen3 = index["Qwen-Qwen3-0.6B.jinja"]
    assert (qwen3.think_start, qwen3.think_end, qwen3.end_of_turn) == ("<think>", "</think>", ("<|im_end|>",))
    assert index["meta-llama-Llama-3.1-8B-Instruct.jinja"].end_of_turn == ("<|eot_id|>",)
    assert "<|call|>" in index["openai-gpt-oss-120b.jinja"].end_of_turn
    assert index["GLM-4.6.jinja"].end_of_turn == ()
    for entry in index.values():
        assert set(entry.end_of_turn) <= set(entry.markers), entry.name
        if entry.think_start:
            assert {entry.think_start, entry.think_end} <= set(entry.markers), entry.name


def test_index_is_deterministic_json(tmp_path: Path) -> None:
    text = INDEX_PATH.read_text(encoding="utf-8")
    rows = json.loads(text)
    assert [row["name"] for row in rows] == sorted(row["name"] for row in rows)
    assert dumps_index(list(load_index().values())) == text
    copy = tmp_path / "index.json"
    copy.write_text(text, encoding="utf-8")
    assert index_hash(copy) == index_hash()


def test_a_malformed_index_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "index.json"
    bad.write_text('[{"name": "x.jinja"}]', encoding="utf-8")
    with pytest.raises(IndexFileError, match=str(bad)):
        load_index(bad)
