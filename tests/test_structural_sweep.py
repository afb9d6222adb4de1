"""A sweep stores the structural checks of both readings; a parser that breaks one where llama.cpp holds it
fails the gate, and a clean run passes it."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from chatparity import cli
from tests.drill_support import OTHER_PARSER, QWEN3, streamed_sweep

pytestmark = pytest.mark.oracle

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rio", "days": 3}}\n</tool_call>'
LINES = (
    {
        "id": "structure-call",
        "template": QWEN3,
        "thinking": True,
        "tools": "auto",
        "kwargs": {},
        "reply": "<think>\nWeather.\n</think>\n\n" + CALL,
        "partial": False,
    },
    {
        "id": "structure-plain",
        "template": QWEN3,
        "thinking": True,
        "tools": "auto",
        "kwargs": {},
        "reply": "Hello.",
        "partial": False,
    },
    {
        "id": "structure-cut",
        "template": QWEN3,
        "thinking": True,
        "tools": "auto",
        "kwargs": {},
        "reply": "<think>\nWeather.\n</think>\n\n" + CALL[:CALL.index("Rio") + 2],
        "partial": True,
        "meant_problems": ["cut_off"],
    },
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A clean run, a run of the planted parser, and a baseline written from the clean run."""
    directory = tmp_path_factory.mktemp("structure")
    corpus = directory / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    made = {
        "clean": directory / "clean",
        "planted": directory / "planted",
        "silent": directory / "silent",
        "baseline": directory / "baseline",
    }
    streamed_sweep(made["clean"], corpus, directory / "cache", "reply")
    streamed_sweep(made["planted"], corpus, directory / "cache", "tests.structure_parsers:calls_renaming")
    streamed_sweep(made["silent"], corpus, directory / "cache", "tests.structure_parsers:problems_dropping")
    assert cli.main(["gate", "--baseline", str(made["baseline"]), "--update", str(made["clean"])]) == 0
    return made


def checks(run: Path) -> dict[tuple[str, str], tuple[object, ...]]:
    """Per (reply, chunking): the parser's and llama.cpp's arguments_schema and no_leakage."""
    connection = sqlite3.connect(run / "rows.sqlite")
    try:
        found = connection.execute(
            "SELECT reply, chunking, arguments_schema, oracle_arguments_schema, no_leakage, oracle_no_leakage, "
            "structure_detail FROM rows"
        )
        return {(reply[-6:], chunking): tuple(rest) for reply, chunking, *rest in found}
    finally:
        connection.close()


def test_both_readings_are_checked_whole_and_streamed(runs: dict[str, Path]) -> None:
    clean, planted = checks(runs["clean"]), checks(runs["planted"])
    for chunking in ("whole", "char"):
        assert clean[("_call>", chunking)] == (1, 1, 1, 1, "")
        assert clean[("Hello.", chunking)] == (None, None, 1, 1, "")
        schema, oracle_schema, *_, detail = planted[("_call>", chunking)]
        assert (schema, oracle_schema) == (0, 1) and "'launch_rocket' is not an offered tool" in detail


def test_the_planted_structural_bug_fails_the_gate_and_the_clean_run_passes(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["gate", "--baseline", str(runs["baseline"]), str(runs["clean"]), *OTHER_PARSER]) == 0
    capsys.readouterr()
    assert cli.main(["gate", "--baseline", str(runs["baseline"]), str(runs["planted"]), *OTHER_PARSER]) == 1
    printed = capsys.readouterr().out
    failing = printed.split("FAILING ROWS")[1]
    assert re.search(r"regression: .*mismatch:calls @[0-9a-f]{10} !arguments_schema", failing)


def test_problems_that_disagree_with_the_reading_fail_the_gate(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    def agreement(run: Path) -> dict[tuple[str, str], tuple[object, ...]]:
        connection = sqlite3.connect(run / "rows.sqlite")
        try:
            found = connection.execute("SELECT reply, chunking, problems_agree, oracle_problems_agree FROM rows")
            return {(reply[-6:], chunking): tuple(rest) for reply, chunking, *rest in found}
        finally:
            connection.close()

    clean, silent = agreement(runs["clean"]), agreement(runs["silent"])
    assert clean[("Hello.", "whole")] == clean[("Hello.", "char")] == (1, None)
    assert silent[("Hello.", "whole")] == (0, None) and silent[("Hello.", "char")] == (1, None)
    assert silent[("_call>", "whole")] == (1, None)
    assert clean[('": "Ri', "whole")] == (1, None) and clean[('": "Ri', "char")] == (None, None)
    assert silent[('": "Ri', "whole")] == (0, None)
    assert cli.main(["gate", "--baseline", str(runs["baseline"]), str(runs["silent"]), *OTHER_PARSER]) == 1
    printed = capsys.readouterr().out
    assert "match !problems_agree" in printed.split("FAILING ROWS")[1]
