"""The worked example of the subprocess protocol: a Node parser of the hermes format, swept through `cmd:` with
expectations of its own, as its maintainer would."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "hermes_parser"
NODE_PARSER = f"cmd:node {EXAMPLE / 'parser.mjs'}"
TEMPLATE = "Qwen-Qwen3-0.6B.jinja"


def chatparity(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the chatparity command as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "chatparity", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def sweep(out: Path, parser: str, expectations: Path | None, *flags: str) -> subprocess.CompletedProcess[str]:
    """A quick sweep of one template through a parser."""
    args = ["sweep", "--parser", parser, "--templates", TEMPLATE, "-n", "0", "--out", str(out), *flags]
    return chatparity(*args, *(["--expectations", str(expectations)] if expectations else []))


def maintainer_sweeps(tmp_path: Path, parser: str) -> Path:
    """A maintainer's first sweep of an example parser with the example's policies, the baseline recorded as
    the sweep prints it, and a second sweep and a gate that pass against it; the expectations directory."""
    expectations = tmp_path / "expectations"
    expectations.mkdir()
    shutil.copy(EXAMPLE / "expectations" / "policies.toml", expectations)
    first = sweep(tmp_path / "first", parser, expectations, "--junitxml", str(tmp_path / "first.xml"))
    assert first.returncode == 1, first.stdout[-2000:] + first.stderr[-2000:]
    assert first.stdout.startswith("FAIL (no baseline): 0 regressions, ") or "\nFAIL (no baseline): 0 regressions" in (
        first.stdout
    )
    assert "accepted by policy: " in first.stdout and "holds-a-marker-still-arriving" in first.stdout
    junit = ElementTree.parse(tmp_path / "first.xml").getroot()
    assert int(junit.get("tests", 0)) >= 10 and int(junit.get("failures", 0)) >= 1
    hint = next(line for line in first.stdout.splitlines() if line.startswith("  next: "))
    printed_gate = hint.split("`chatparity ")[1].split("`")[0].split()
    assert printed_gate == ["gate", "--update", "--baseline", str(expectations / "baseline"), str(tmp_path / "first")]
    assert f"`--expectations {expectations}`" in hint
    updated = chatparity(*printed_gate)
    assert updated.returncode == 0, updated.stderr
    assert (expectations / "baseline" / "outcomes.csv").read_text(encoding="utf-8").startswith(
        "template,mode,origin,shape,chunkings,outcome,case_id\n"
    )
    second = sweep(tmp_path / "second", parser, expectations, "--junitxml", str(tmp_path / "second.xml"))
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert "PASS against " in second.stdout and "accepted by the baseline without a reason: " in second.stdout
    assert ElementTree.parse(tmp_path / "second.xml").getroot().get("failures") == "0"
    headline = next(line for line in second.stdout.splitlines() if line.startswith("rows "))
    matched, judged = headline.split("match ")[1].split(" ")[0].split("/")
    policy = int(headline.split("parser policy ")[1].split(";")[0])
    defect = int(headline.split("llama.cpp defect ")[1].split(";")[0])
    assert int(judged) > 300 and int(matched) + policy + defect >= 0.95 * int(judged) and policy > 0
    gate = chatparity("gate", str(tmp_path / "second"))
    assert gate.returncode == 0 and "gate: PASS" in gate.stdout, gate.stdout + gate.stderr
    return expectations


def test_a_maintainer_sweeps_the_example_records_expectations_and_passes(tmp_path: Path) -> None:
    assert (maintainer_sweeps(tmp_path, NODE_PARSER) / "baseline" / "outcomes.csv").is_file()


def test_another_parser_is_refused_against_the_baseline_unless_asked(tmp_path: Path) -> None:
    run = sweep(tmp_path / "oracle", "oracle", None, "--mode", "nothink/none")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "PASS (no baseline): 0 regressions, 0 new failing rows" in run.stdout and "expectations: none" in run.stdout
    baseline = str(EXAMPLE / "expectations" / "baseline")
    refused = chatparity("gate", "--baseline", baseline, "--allow-pin-mismatch", str(tmp_path / "oracle"))
    assert refused.returncode == 2 and "--allow-other-parser" in refused.stderr
    allowed = chatparity(
        "gate", "--baseline", baseline, "--allow-pin-mismatch", "--allow-other-parser", str(tmp_path / "oracle")
    )
    assert allowed.returncode in (0, 1) and "WARNING: the baseline is of parser" in allowed.stderr


def test_a_stray_line_on_stdout_is_named_and_fails_the_sweep(tmp_path: Path) -> None:
    noisy = tmp_path / "noisy.py"
    noisy.write_text(
        "import subprocess, sys\n"
        f"child = subprocess.Popen(['node', {str(EXAMPLE / 'parser.mjs')!r}], stdin=subprocess.PIPE,\n"
        "                         stdout=subprocess.PIPE, text=True)\n"
        "for line in sys.stdin:\n"
        "    child.stdin.write(line); child.stdin.flush()\n"
        "    print('debug: got a request')\n"
        "    print(child.stdout.readline(), end='', flush=True)\n",
        encoding="utf-8",
    )
    run = sweep(tmp_path / "noisy", f"cmd:{sys.executable} {noisy}", None, "--mode", "nothink/none")
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    failures = [line for line in run.stdout.splitlines() if "parser_crashed" in line]
    assert failures and all("answer is not JSON" in line and "debug: got a request" in line for line in failures)
    assert "stdout carries only answers; write logs to stderr" in failures[0]


def test_show_prints_the_messages_and_tools_of_a_real_case(tmp_path: Path) -> None:
    assert sweep(tmp_path / "run", NODE_PARSER, None, "--mode", "think/auto").returncode in (0, 1)
    connection = sqlite3.connect(tmp_path / "run" / "rows.sqlite")
    (case,) = connection.execute("SELECT case_id FROM rows ORDER BY case_id LIMIT 1").fetchone()
    connection.close()
    shown = chatparity("show", case, str(tmp_path / "run"))
    assert shown.returncode == 0, shown.stderr
    assert '{"role": "user", "content": "What\'s the weather in Rio?"}' in shown.stdout
    assert '"name": "get_weather"' in shown.stdout and "replay just this case:" in shown.stdout


def test_llama_cpp_against_itself_passes_where_its_own_stream_ends_otherwise(tmp_path: Path) -> None:
    args = ["sweep", "--parser", "oracle", "--templates", "GigaChat3-10B-A1.8B.jinja", "--mode", "think/auto"]
    run = chatparity(*args, "-n", "0", "--out", str(tmp_path / "oracle"))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    headline = next(line for line in run.stdout.splitlines() if line.startswith("rows "))
    matched, judged = headline.split("match ")[1].split(" ")[0].split("/")
    assert matched == judged and "STRICT" not in run.stdout
    assert "PASS (no baseline): 0 regressions, 0 new failing rows" in run.stdout and "expectations: none" in run.stdout
