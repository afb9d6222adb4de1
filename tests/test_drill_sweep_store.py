"""Drills: a sweep that fails before its rows exist leaves an earlier run byte-identical and says why in one
line; a parser that kills its process costs only its session; any -n stores the same bytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.drill_support import GOOD_LINES, QWEN3, corpus_file, rows, snapshot, stamp, sweep

BAD_LINES = (
    ('{"id": "b1", "template": "Qwen-Qwen3-0.6B.jinja", "thinking": 3, "tools": "auto", "kwargs": {}, '
     '"reply": "x", "partial": false}'),
    "garbage",
    ('{"id": "b3", "template": "Qwen-Qwen3-0.6B.jinja", "thinking": true, "tools": "auto", "kwargs": {}, '
     '"reply": "x\\ud800", "partial": false}'),
)
PARSERS = '''
import hashlib
import os
import reply.harness


class AbortsOnCorpusFile:
    """The project parser, except that it kills its process on one session."""

    def __init__(self):
        self.inner = reply.harness.factory()

    def open(self, session):
        if session.messages[0]["content"] == "Another question?":
            os.abort()
        return self.inner.open(session)


class StuckInC(AbortsOnCorpusFile):
    """The project parser, except that one session's open is stuck in C code, where no signal reaches."""

    def open(self, session):
        if session.messages[0]["content"] == "Another question?":
            hashlib.pbkdf2_hmac("sha256", b"x", b"y", 10**9)
        return self.inner.open(session)


class WritesALoneSurrogate:
    """A parser whose content ends in a lone surrogate."""

    def open(self, session):
        return self

    def parse(self, text, partial=False):
        from chatparity.model import Message
        return Message(content=text + "\\ud800")

    def stream(self):
        raise RuntimeError("no streams")


def raises():
    raise RuntimeError("factory boom")


def aborts():
    return AbortsOnCorpusFile()


def surrogate():
    return WritesALoneSurrogate()


def stuck():
    return StuckInC()
'''


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An oracle answer cache shared by this module's sweeps."""
    return tmp_path_factory.mktemp("drill-cache")


@pytest.fixture(scope="module")
def earlier(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Path:
    """A complete earlier run."""
    directory = tmp_path_factory.mktemp("earlier")
    out = directory / "run"
    assert sweep(out, corpus_file(directory), cache, "-n", "0") == 0
    return out


@pytest.fixture
def parsers(tmp_path: Path) -> str:
    """The drill parsers' file, as the prefix of a --parser spec."""
    path = tmp_path / "drill_parsers.py"
    path.write_text(PARSERS, encoding="utf-8")
    return f"{path}:"


@pytest.fixture
def kept(tmp_path: Path, earlier: Path) -> Path:
    """A copy of the earlier run, for a failing sweep to be pointed at."""
    return Path(shutil.copytree(earlier, tmp_path / "kept"))


def test_every_bad_corpus_line_is_named_and_the_earlier_run_is_untouched(
    tmp_path: Path, kept: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(kept)
    corpus = corpus_file(tmp_path, *BAD_LINES)
    with corpus.open("ab") as file:
        file.write(b'\xff\xfe{"binary"\n')
    status = sweep(kept, corpus, cache, "-n", "2")
    err = capsys.readouterr().err
    assert status == 2 and snapshot(kept) == before
    assert err.splitlines() == [
        f"chatparity sweep: {corpus}:4: field 'thinking': expected true or false, got 3",
        f"chatparity sweep: {corpus}:5: field '(line)': not JSON: Expecting value: line 1 column 1 (char 0)",
        f"chatparity sweep: {corpus}:6: field 'reply': holds a lone surrogate (\\ud800-\\udfff), not text",
        f"chatparity sweep: {corpus}:7: field '(line)': not UTF-8 text: byte 0xff at byte 0",
    ]


def test_an_empty_corpus_file_is_refused(tmp_path: Path, kept: Path, cache: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(kept)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert sweep(kept, empty, cache) == 2
    assert f"{empty}:0: field '(file)': holds no reply" in capsys.readouterr().err
    assert snapshot(kept) == before


@pytest.mark.parametrize("workers", ["0", "1"])
def test_a_glob_that_matches_nothing_writes_nothing(
    tmp_path: Path, kept: Path, cache: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    before = snapshot(kept)
    status = sweep(kept, corpus_file(tmp_path), cache, "--templates", "No-such-*", "-n", workers)
    err = capsys.readouterr().err
    assert status == 2 and snapshot(kept) == before
    assert "no session matches the selection (--templates 'No-such-*'" in err
    assert f"nothing written to {kept}" in err
    assert "Traceback" not in err


def test_a_parser_factory_that_raises_writes_nothing(
    tmp_path: Path, kept: Path, cache: Path, parsers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(kept)
    status = sweep(kept, corpus_file(tmp_path), cache, "--parser", parsers + "raises")
    captured = capsys.readouterr()
    assert status == 2 and snapshot(kept) == before
    assert "cannot start: RuntimeError: factory boom" in captured.err
    assert "Traceback" not in captured.out + captured.err


def test_a_python_parser_that_aborts_costs_only_its_session_without_n(
    tmp_path: Path, cache: Path, parsers: str
) -> None:
    out = tmp_path / "aborts"
    status = sweep(out, corpus_file(tmp_path), cache, "--parser", parsers + "aborts")
    stored = rows(out)
    assert status == 1
    assert {row["reply"] for row in stored} == {line["reply"] for line in GOOD_LINES[:2]}
    lost = stamp(out)["lost_items"]
    assert len(lost) == 1 and lost[0].endswith("its worker process died")


def test_a_python_parser_stuck_past_its_timeout_costs_only_its_session(
    tmp_path: Path, cache: Path, parsers: str
) -> None:
    out = tmp_path / "stuck"
    status = sweep(out, corpus_file(tmp_path), cache, "--parser", parsers + "stuck", "--timeout", "1")
    assert status == 1
    assert {row["reply"] for row in rows(out)} == {line["reply"] for line in GOOD_LINES[:2]}
    lost = stamp(out)["lost_items"]
    assert len(lost) == 1 and lost[0].endswith("its worker process died")


def test_a_lone_surrogate_from_a_parser_is_stored_escaped(tmp_path: Path, cache: Path, parsers: str) -> None:
    out = tmp_path / "surrogate"
    assert sweep(out, corpus_file(tmp_path), cache, "--parser", parsers + "surrogate", "-n", "0") == 0
    plain = next(row for row in rows(out) if row["reply"] == "Hello.")
    assert plain["outcome"] == "mismatch" and "Hello.\\ud800" in plain["parser_reading"]
    assert json.loads(plain["parser_reading"])["content"] == "Hello.\ud800"


def test_one_and_two_workers_store_identical_bytes(tmp_path: Path, cache: Path) -> None:
    corpus = corpus_file(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    assert sweep(one, corpus, cache, "-n", "1") == 0 and sweep(two, corpus, cache, "-n", "2") == 0
    assert (one / "rows.sqlite").read_bytes() == (two / "rows.sqlite").read_bytes()
    assert {row["template"] for row in rows(one)} == {QWEN3} and "workers" not in stamp(one)
