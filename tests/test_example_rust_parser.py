"""The worked example in a compiled language: the hermes parser in Rust (standard library only), built
with cargo, checked against the protocol and swept as the Node example is, reading each row as Node's does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from templates.upstream import cache_root
from tests.test_example_parser import EXAMPLE, ROOT, chatparity, maintainer_sweeps

RUST_EXAMPLE = ROOT / "examples" / "hermes_parser_rust"
TARGET = cache_root() / "examples" / "hermes_parser_rust"

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not on PATH")


def cargo(command: str) -> subprocess.CompletedProcess[str]:
    """A cargo command on the example, offline and in release mode, its target directory in the chatparity
    cache so that a rebuild is quick."""
    return subprocess.run(
        ["cargo", command, "--release", "--offline", "--manifest-path", str(RUST_EXAMPLE / "Cargo.toml")],
        env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def rust_parser() -> Path:
    """The example's release build."""
    built = cargo("build")
    assert built.returncode == 0, built.stderr[-3000:]
    return TARGET / "release" / "hermes-parser"


def test_the_rust_examples_json_reader_and_writer_agree_with_json_parse_and_stringify() -> None:
    tested = cargo("test")
    assert tested.returncode == 0 and "test result: ok." in tested.stdout, (
        tested.stdout[-3000:] + tested.stderr[-3000:]
    )


def test_the_rust_example_speaks_the_protocol(rust_parser: Path) -> None:
    checked = chatparity("protocol-check", str(rust_parser))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("PASS: ") and "no protocol violation" in checked.stdout


def test_a_maintainer_sweeps_the_rust_example_and_it_reads_every_row_as_the_node_example(
    tmp_path: Path, rust_parser: Path
) -> None:
    recorded = maintainer_sweeps(tmp_path, f"cmd:{rust_parser}") / "baseline"
    shared = EXAMPLE / "expectations" / "baseline"
    assert (recorded / "stamp.json").read_bytes() == (shared / "stamp.json").read_bytes()
    rust_rows = set((recorded / "outcomes.csv").read_text(encoding="utf-8").splitlines())
    node_rows = set((shared / "outcomes.csv").read_text(encoding="utf-8").splitlines())
    differences = [("rust " if row in rust_rows else "node ") + row for row in sorted(rust_rows ^ node_rows)]
    assert not differences, (
        f"{len(differences)} rows read otherwise than the Node example's baseline records "
        "('gate --update' it if the corpus changed):\n" + "\n".join(differences[:20])
    )
