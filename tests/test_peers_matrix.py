"""The peer matrix and `chatparity peers`, with an injected installer and sweep (nothing is installed or
downloaded): the environment's life cycle, the verdict of each stored row, and the matrix written from stores.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from chatparity.model import Row
from harness.store import connect, write_records, write_stamp
from peers import command, matrix, pages
from peers.catalog import PEERS_ROOT, Peer, peers_named
from peers.install import MARKER, Installed, InstallFailed, install

PEER = Peer("fake", "1.0", (("--no-deps", "fake==1.0"), ("dep==2",)))


def test_a_peer_is_installed_once_into_its_own_environment_and_then_reused(tmp_path: Path) -> None:
    """A venv and each pip step into it; the finished environment is marked, then reused without a run."""
    ran: list[list[str]] = []

    def run(argv: Sequence[str]) -> None:
        ran.append(list(argv))
        if argv[1:3] == ["-m", "venv"]:
            (Path(argv[3]) / "bin").mkdir(parents=True)
            (Path(argv[3]) / "bin" / "python").write_text("")

    first = install(PEER, tmp_path, run)
    assert (
        first.home == tmp_path / "peers" / "fake-1.0" and (first.home / MARKER).is_file() and not first.cached
    )
    assert [argv[-len(step) :] for argv, step in zip(ran[1:], PEER.steps)] == [
        list(step) for step in PEER.steps
    ]
    assert all(argv[0].endswith("bin/python") and "fake-1.0.partial-" in argv[0] for argv in ran[1:])
    ran.clear()
    again = install(PEER, tmp_path, run)
    assert again.cached and again.python == first.python and ran == []


def test_a_failed_install_leaves_nothing_that_looks_installed(tmp_path: Path) -> None:
    """The failing step's line is the error; no environment, finished or partial, is left."""

    def run(argv: Sequence[str]) -> None:
        if "dep==2" in argv:
            raise InstallFailed("pip install dep==2 exited 1: No matching distribution found for dep==2")
        Path(argv[-1] if argv[1:3] == ["-m", "venv"] else "/").mkdir(parents=True, exist_ok=True)

    with pytest.raises(InstallFailed, match="No matching distribution"):
        install(PEER, tmp_path, run)
    assert list((tmp_path / "peers").iterdir()) == []


def test_unknown_peers_are_refused_by_name() -> None:
    """--peers names only peers the catalog knows."""
    assert [peer.name for peer in peers_named("sglang")] == ["sglang"]
    with pytest.raises(ValueError, match="unknown peer vllm2"):
        peers_named("sglang,vllm2")


BASE = Row(
    "c1",
    "whole",
    "s1",
    "Qwen-Qwen3-0.6B.jinja",
    "Qwen3",
    "hermes",
    "think/auto",
    "auto",
    "c",
    "toolcall",
    "toolcall",
    0,
    "match",
    reply='<tool_call>{"name": "f"}</tool_call>',
    oracle_reading='{"content": "", "reasoning_content": "", '
    '"tool_calls": [{"name": "f", "arguments": "{}"}]}',
)


def rows() -> list[Row]:
    """One row of each verdict, streamed and whole."""
    return [
        BASE,
        dataclasses.replace(BASE, case_id="c2", outcome="mismatch", kind="content", parser_reading="{}"),
        dataclasses.replace(
            BASE,
            case_id="c3",
            chunking="tokens",
            outcome="mismatch",
            kind="content",
            explained="held_marker_start",
        ),
        dataclasses.replace(
            BASE,
            case_id="c4",
            chunking="char",
            outcome="mismatch",
            kind="calls",
            explained="llama.cpp:retraction",
        ),
        dataclasses.replace(BASE, case_id="c5", chunking="tokens", snapshot_parity=0, parity_breaks=3),
        dataclasses.replace(
            BASE,
            case_id="c6",
            template="gemma.jinja",
            syntax="content_only",
            outcome="unsupported",
            error="gemma.jinja: no parser for gemma",
        ),
        dataclasses.replace(
            BASE, case_id="c9", mode="think/required", outcome="unsupported", error="no JSON"
        ),
        dataclasses.replace(BASE, case_id="c7", outcome="oracle_crashed"),
        dataclasses.replace(
            BASE,
            case_id="c8",
            outcome="mismatch",
            kind="accepts",
            parser_reading="{}",
            oracle_grammar="rejects @3 from 0",
        ),
        dataclasses.replace(
            BASE, case_id="c2", chunking="char", outcome="mismatch", kind="content", parser_reading="{}"
        ),
    ]


def store(run: Path, revision: str = "r1") -> Path:
    """A run store holding `rows()`."""
    connection = connect(run)
    write_stamp(connection, {"parser_revision": revision})
    write_records(connection, rows())
    connection.close()
    return run


def test_each_row_gets_the_harness_s_label_in_its_chunking_class(tmp_path: Path) -> None:
    """match, policy, llama.cpp defect and bug by chunking class; a broken stream check is a bug; declined and
    llama.cpp's own errors are not judged."""
    column = matrix.column_of("p", store(tmp_path / "run"))
    assert column.version == "r1"
    assert column.total("whole") == {
        "match": 1,
        "bug": 2,
        "oracle_error": 1,
        "final_agrees": 1,
        "bug_accepts": 1,
        "bug_off_grammar": 1,
    }
    assert column.total("tokens") == {"policy": 1, "bug": 1, "final_agrees": 2}
    assert column.total("chars") == {"defect": 1, "final_agrees": 1, "bug": 1}
    assert column.declined == {
        ("gemma.jinja", "no parser for gemma"): {"think/auto"},
        ("Qwen-Qwen3-0.6B.jinja", "no JSON"): {"think/required"},
    }
    assert sorted(column.bugs) == [
        "hermes chars mismatch:content",
        "hermes tokens match !snapshot_parity",
        "hermes whole mismatch:accepts",
        "hermes whole mismatch:content",
    ]
    assert (
        matrix.bug_signature(dataclasses.replace(rows()[1], partial=1)) == "hermes whole cut mismatch:content"
    )
    assert column.bugs["hermes tokens match !snapshot_parity"].streaming_only
    assert not column.bugs["hermes chars mismatch:content"].streaming_only
    assert pages.agreement(column.total("whole")) == "33% (1/3)"
    assert matrix.column_of("p", tmp_path / "run", templates="gemma*").cells == {}


def test_the_matrix_reads_verdict_first_and_lists_declined_templates_and_bug_classes(tmp_path: Path) -> None:
    """The summary table, per-syntax agreement, rows per label, a peer that did not run and its reason."""
    column = matrix.column_of("sglang", store(tmp_path / "run"))
    failed = matrix.Column("other", "2.0", status="install failed: no wheel")
    text = pages.markdown([column, failed], {"sglang": {"hermes whole mismatch:content": "print('replay')"}})
    assert "| sglang | r1 | 33% (1/3) | 0% (0/2); final 100% | 0% (0/2); final 50% | 4 |" in text
    assert "| other | 2.0 | install failed: no wheel |" in text
    assert "| hermes | 33% (1/3) | 0% (0/2) | 0% (0/2) |" in text
    assert "4 parser-bug classes (1 streaming-only" in text and "rows (streaming-only)" in text
    assert "| sglang | whole | 1 | 0 | 0 | 2 | 1 | 1 |" in text
    assert "| sglang | token-streamed | 0 | 1 | 0 | 1 | 0 | 0 |" in text
    assert "- `gemma.jinja` (every mode): no parser for gemma" in text
    assert "- `Qwen-Qwen3-0.6B.jinja` (think/required): no JSON" in text
    assert "```python\nprint('replay')\n```" in text
    page = pages.html_page([column, failed], {"sglang": {"hermes whole mismatch:content": "print('<b>')"}})
    assert "<td style='background:hsl(40,60%,85%)'>33% (1/3)</td>" in page
    assert "<pre>print(&#x27;&lt;b&gt;&#x27;)</pre>" in page and "install failed: no wheel" in page


def fake_installer(tmp_path: Path, fails: bool = False) -> command.Install:
    """An installer that installs nothing."""

    def installer(peer: Peer, cache: Path) -> Installed:
        if fails:
            raise InstallFailed("pip exited 1: no index")
        return Installed(peer, tmp_path / "env", 1.0, 2 << 20, cached=True)

    return installer


def test_the_command_sweeps_each_parser_and_writes_the_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The peer swept as a cmd: parser in its environment with its expectations, reply and llama.cpp beside
    it; peers.md and peers.json under --out."""
    calls: list[list[str]] = []

    def sweep(argv: Sequence[str]) -> int:
        calls.append(list(argv))
        store(Path(argv[argv.index("--out") + 1]))
        return 1

    out = tmp_path / "out"
    status = command.main(
        ["--peers", "sglang", "--templates", "Qwen-*", "--out", str(out)],
        sweep=sweep,
        installer=fake_installer(tmp_path),
    )
    assert status == 0
    specs = [argv[argv.index("--parser") + 1] for argv in calls]
    assert specs[0].startswith(f"cmd:{tmp_path / 'env' / 'bin' / 'python'} ") and specs[0].endswith(
        "sglang.serve " + str(PEERS_ROOT / "sglang" / "expectations")
    )
    assert specs[1:] == ["reply", "oracle"]
    assert "--expectations" in calls[0] and all(
        argv[argv.index("--templates") + 1] == "Qwen-*" for argv in calls
    )
    data = json.loads((out / "peers.json").read_text())
    assert [parser["name"] for parser in data["parsers"]] == ["sglang", "reply", "llama.cpp"]
    assert data["parsers"][0]["totals"]["whole"] == {
        "match": 1,
        "policy": 0,
        "defect": 0,
        "bug": 2,
        "bug_accepts": 1,
        "bug_off_grammar": 1,
        "final_agrees": 1,
    }
    assert "sglang-0.5.23: cached" in capsys.readouterr().out


def test_a_failed_install_is_one_line_and_the_peer_s_column_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The peer is not swept; the references still are, from given runs here."""
    reference = store(tmp_path / "reference")

    def sweep(argv: Sequence[str]) -> int:
        raise AssertionError(f"nothing should be swept: {argv}")

    out = tmp_path / "out"
    command.main(
        ["--out", str(out), "--reply-run", str(reference), "--oracle-run", str(reference)],
        sweep=sweep,
        installer=fake_installer(tmp_path, fails=True),
    )
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == [
        "sglang-0.5.23: install failed: pip exited 1: no index",
        "transformers-5.25.0: install failed: pip exited 1: no index",
    ]
    assert "| sglang | 0.5.23 | install failed: pip exited 1: no index |" in (out / "peers.md").read_text()


def test_the_matrix_can_be_written_again_from_the_runs_under_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--from-runs installs and sweeps nothing; a column without a stored run says so."""
    monkeypatch.setattr(command, "cache_root", lambda: tmp_path / "cache")
    out = tmp_path / "out"
    store(out / "sglang")
    store(out / "reply")

    def refuse(*args: object) -> int:
        raise AssertionError("nothing should be installed or swept")

    command.main(["--peers", "sglang", "--out", str(out), "--from-runs"], sweep=refuse, installer=refuse)  # type: ignore[arg-type]
    data = json.loads((out / "peers.json").read_text())
    assert [parser["status"] for parser in data["parsers"]] == [
        "",
        "",
        f"no run stored in {out / 'llama.cpp'}",
    ]
