"""A parser's identity in a run's stamp: the name its `info` answer or its Python object gives, else its module and
factory (or its command), the same wherever it is installed; the project parser stays `reply`, so baselines
recorded before identities keep matching."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.command_parser import CommandParser
from harness.parser_specs import PROJECT_ROOT, load_parser, parser_spec
from harness.parsers import PythonParser
from reports.expectations import check_same_parser

MODULE = '''
class Parser:
    def open(self, session):
        raise NotImplementedError


class Named(Parser):
    name = "mine"


def factory():
    return Parser()


def named():
    return Named()
'''

PROGRAM = '''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    answer = {"name": "hermes-like", "revision": "7"} if request["op"] == "info" and NAMED else {}
    print(json.dumps({"id": request["id"], **answer}), flush=True)
'''


def checkouts(tmp_path: Path, name: str, text: str) -> list[Path]:
    """The same file in two checkouts."""
    paths = []
    for checkout in ("a", "b"):
        path = tmp_path / checkout / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def test_a_python_parser_is_its_object_s_name_else_its_module_and_factory_wherever_it_lives(tmp_path: Path) -> None:
    first, second = checkouts(tmp_path, "my_parser.py", MODULE)
    assert PythonParser(f"{first}:factory").name == PythonParser(f"{second}:factory").name == "my_parser:factory"
    assert PythonParser(f"{second}:named").name == "mine"


def test_a_program_is_the_name_its_info_gives_else_its_command(tmp_path: Path) -> None:
    named = checkouts(tmp_path, "named.py", "NAMED = True\n" + PROGRAM)
    parsers = [CommandParser(f"{sys.executable} {path}", timeout=5.0) for path in named]
    try:
        assert [(parser.name, parser.revision()) for parser in parsers] == [("hermes-like", "7")] * 2
    finally:
        for parser in parsers:
            parser.close()
    silent = tmp_path / "silent.py"
    silent.write_text("NAMED = False\n" + PROGRAM, encoding="utf-8")
    quiet = CommandParser(f"{sys.executable} {silent}", timeout=5.0)
    try:
        assert (quiet.name, quiet.revision()) == (f"cmd:{sys.executable} {silent}", "")
    finally:
        quiet.close()


def test_the_project_parser_is_reply_as_its_committed_baselines_record() -> None:
    name = load_parser(parser_spec("reply")).name
    assert name == load_parser(parser_spec("reply.harness:factory")).name == "reply"
    for baseline in ("baseline", "baseline-full"):
        stamp = json.loads((PROJECT_ROOT / "reply" / "expectations" / baseline / "stamp.json").read_text())
        assert check_same_parser(stamp, {"parser": name}, "the baseline", allow=False) == []
