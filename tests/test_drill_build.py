"""Drills: an oracle that is not built yet is built where its progress shows, in a sweep and in a test run, and
a cache directory that cannot be made is one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oracle.build import TARGET, binary_path
from templates.pins import DEFAULT_VERSION
from templates.upstream import cache_root, sdist_path
from tests.drill_support import QWEN3, ROOT, chatparity, corpus_file, rows
from tests.test_drill_children import program

CMAKE = '''
import pathlib, sys
tree = pathlib.Path(sys.argv[sys.argv.index("-B") + 1])
tree.mkdir(parents=True, exist_ok=True)
(tree / "CMakeCache.txt").write_text("CMAKE_MAKE_PROGRAM:FILEPATH={ninja}\\n")
'''
NINJA = '''
import pathlib, shutil, sys
tree = pathlib.Path(sys.argv[sys.argv.index("-C") + 1])
print("[1/2] Building CXX object CMakeFiles/{target}.dir/src/oracle.cpp.o", flush=True)
print("[2/2] Linking CXX executable {target}", flush=True)
shutil.copy2({built!r}, tree / "{target}")
'''
"""Build tools standing in for cmake and ninja: they report a build as ninja does and install the oracle built
already (the drill shows the build, not the compiler)."""


@pytest.fixture
def fresh_cache(tmp_path: Path) -> dict[str, str]:
    """The environment of a first run: an empty cache but for the pinned sdist and its source tree (linked from
    this machine's cache, so nothing is downloaded), and build tools that take a second."""
    tools = tmp_path / "tools"
    tools.mkdir()
    ninja = program(tools, "ninja", NINJA.format(target=TARGET, built=str(binary_path())))
    program(tools, "cmake", CMAKE.format(ninja=ninja))
    home = tmp_path / "xdg"
    sdist = home / "chatparity" / "sdist" / sdist_path(DEFAULT_VERSION).name
    sdist.parent.mkdir(parents=True)
    linked(sdist_path(DEFAULT_VERSION), sdist)
    linked(cache_root() / DEFAULT_VERSION / "llama.cpp", home / "chatparity" / DEFAULT_VERSION / "llama.cpp")
    return {"XDG_CACHE_HOME": str(home), "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}


def linked(source: Path, target: Path) -> None:
    """`target` as a copy of `source` (a file or a tree) made of hard links where the file system allows."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["cp", "-al", str(source), str(target)], capture_output=True, check=False).returncode:
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def shows_the_build(output: str, home: str) -> None:
    """The output names where the oracle builds and shows the build's progress."""
    where = Path(home) / "chatparity" / DEFAULT_VERSION
    assert f"building it in {where} " in output, output
    assert f"[2/2] Linking CXX executable {TARGET}" in output and f"oracle installed at {where}" in output


def test_a_sweep_builds_the_oracle_where_its_progress_shows(tmp_path: Path, fresh_cache: dict[str, str]) -> None:
    done = chatparity("sweep", "--corpus", str(corpus_file(tmp_path)), "--templates", QWEN3, "--chunking", "whole",
                      "--out", str(tmp_path / "run"), "--oracle-cache", str(tmp_path / "answers"), "-n", "1",
                      cwd=tmp_path, env=fresh_cache)
    assert done.returncode == 0, done.stdout + done.stderr
    shows_the_build(done.stderr, fresh_cache["XDG_CACHE_HOME"])
    assert len(rows(tmp_path / "run")) == 3


def test_a_test_run_builds_the_oracle_where_its_progress_shows(fresh_cache: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "tests/test_oracle_stream.py::test_the_grammar_verdicts_follow_llama_servers_sampler"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, **fresh_cache},
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    shows_the_build(done.stdout + done.stderr, fresh_cache["XDG_CACHE_HOME"])


def test_a_cache_directory_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would go\n", encoding="utf-8")
    done = chatparity("oracle", "build", cwd=tmp_path, env={"XDG_CACHE_HOME": str(blocked)})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        (f"chatparity oracle: {blocked / 'chatparity' / DEFAULT_VERSION}: a file stands where a directory is "
         "needed; set XDG_CACHE_HOME (or HOME) to a directory this user can write")]
