"""The pytest plugin: a parser's own pytest run collects an export's cases and judges each as a sweep does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatparity import cli
from oracle.client import BINARY_ENV

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = "Qwen-Qwen3-0.6B.jinja"
HOST_TEST = "def test_host():\n    assert True\n"


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick profile's cases of TEMPLATE, exported once."""
    out = tmp_path_factory.mktemp("plugin-export") / "quick.jsonl"
    assert cli.main(["export", "--profile", "quick", "--templates", TEMPLATE, "--out", str(out)]) == 0
    return out


def case_count(export: Path) -> int:
    """How many case lines the export holds."""
    with export.open(encoding="ascii") as lines:
        return sum("case" in json.loads(line) for line in lines)


def pytest_run(directory: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """pytest run in `directory` with the plugin loaded, llama.cpp out of reach."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), BINARY_ENV: str(directory / "no-llama-cpp")}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--rootdir={directory}", *flags]
    return subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def plugin_run(directory: Path, export: Path, parser: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """pytest with the plugin on the export, the parser under test with the project parser's expectations."""
    return pytest_run(directory, "-p", "chatparity.pytest_plugin", f"--chatparity-export={export}",
                      f"--chatparity-parser={parser}",
                      f"--chatparity-expectations={ROOT / 'reply' / 'expectations'}", *flags)


def test_the_project_parser_passes_every_case(exported: Path, tmp_path: Path) -> None:
    """reply with its expectations: one passing item per case."""
    done = plugin_run(tmp_path, exported, "reply.harness:factory")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{case_count(exported)} passed" in done.stdout


def test_a_planted_bug_fails_with_the_first_difference(exported: Path, tmp_path: Path) -> None:
    """A parser dropping each reading's last call fails the cases llama.cpp reads a call in, each report a
    readable diff."""
    done = plugin_run(tmp_path, exported, "tests.pytest_plugin_parsers:factory", "-k", "one_call")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert " failed" in done.stdout.splitlines()[-1]
    assert f"FAILED quick.jsonl::{TEMPLATE}/think/auto/one_call/" in done.stdout
    assert "first difference: tool_calls: 1 calls vs 0; tool_calls[0] lost: get_weather(" in done.stdout
    assert "llama.cpp's reading (whole):" in done.stdout and "the parser's reading (whole):" in done.stdout
    assert "replay just this case:\n  chatparity sweep --parser tests.pytest_plugin_parsers:factory --oracle" \
        in done.stdout


def test_the_templates_filter_narrows_the_cases(exported: Path, tmp_path: Path) -> None:
    """--chatparity-templates keeps only the cases of the templates it matches."""
    done = plugin_run(tmp_path, exported, "reply.harness:factory", "--chatparity-templates=Llama*",
                      "--collect-only")
    assert done.returncode == 5, done.stdout[-3000:] + done.stderr[-3000:]
    assert "no tests collected" in done.stdout


def test_without_an_export_the_host_suite_runs_alone(tmp_path: Path) -> None:
    """Loaded by a conftest without --chatparity-export, the plugin collects nothing of its own."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["chatparity.pytest_plugin"]\n', encoding="utf-8")
    (tmp_path / "test_host.py").write_text(HOST_TEST, encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text("", encoding="utf-8")
    done = pytest_run(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
    assert "chatparity" in pytest_run(tmp_path, "--help").stdout


def test_an_export_without_a_parser_is_a_usage_error(exported: Path, tmp_path: Path) -> None:
    """--chatparity-export without --chatparity-parser stops pytest with one line naming the option."""
    done = pytest_run(tmp_path, "-p", "chatparity.pytest_plugin", f"--chatparity-export={exported}")
    assert done.returncode == 4
    assert "--chatparity-export needs --chatparity-parser" in done.stderr
