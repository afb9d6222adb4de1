"""The command line: a version, examples in every --help, one line (no traceback) for a closed pipe or for
input the user got wrong, and one flag name per idea."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chatparity.cli import COMMANDS, EXAMPLES, main

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_has_examples_printed_after_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(EXAMPLES) == set(COMMANDS)
    for name in COMMANDS:
        with pytest.raises(SystemExit) as exit:
            main([name, "--help"])
        assert exit.value.code == 0
        out = capsys.readouterr().out
        assert f"examples:\n  chatparity {name}" in out, name


def test_a_closed_pipe_ends_quietly() -> None:
    done = subprocess.run(
        f"{sys.executable} -m chatparity corpus --templates 'Qwen-Qwen3-0.6B.jinja' | head -c 10",
        shell=True, cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert len(done.stdout) == 10 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["corpus", "--templates", "nothing-*"], "no template matches templates='nothing-*'"),
        (["sweep", "--templates", "nothing-*", "--out", "OUT"], "no template matches"),
        (["oracle", "info", "--version", "9.9"], "llama-cpp-python 9.9 is not pinned"),
    ],
)
def test_wrong_input_is_one_line_without_a_traceback(argv: list[str], says: str, tmp_path: Path) -> None:
    argv = [str(tmp_path / "out") if arg == "OUT" else arg for arg in argv]
    done = subprocess.run(
        [sys.executable, "-m", "chatparity", *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode in (1, 2) and says in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_family_is_matched_whatever_its_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "--family", "qwen3", "--counts"]) == 0
    assert "sessions" in capsys.readouterr().out


def test_corpus_takes_the_sweep_flag_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "--templates", "Qwen-Qwen3-0.6B.jinja", "--mode", "think/auto", "--counts"]) == 0
    assert capsys.readouterr().out.split()[:2] == ["templates", "1"]


@pytest.mark.parametrize("args,status", [(["--version"], 0), (["nosuch"], 2)])
def test_the_console_command_leaves_with_its_status_and_everything_frozen(args: list[str], status: int) -> None:
    """`entry` exits with what `main` returned, having frozen what is left (the interpreter's last collection
    skips it)."""
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        f"sys.argv = ['chatparity', *{args!r}]\n"
        "from chatparity.cli import entry\n"
        "entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == status
    assert done.stdout.strip().splitlines()[-1] == "frozen True"
