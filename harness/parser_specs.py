"""The `--parser` spec, parsed in one place: reply, oracle[:VERSION], llama-server[:PATH], cmd:COMMAND ARGS or
pkg.module:factory."""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from chatparity.model import ParserUnderTest
from harness.command_parser import CommandParser
from harness.oracle_cache import OracleCache
from harness.oracle_parser import OracleParser
from harness.oracle_reads import OracleIdentity, OracleReads
from harness.parsers import DEFAULT_TIMEOUT, PythonParser
from harness.server_parser import NAME as SERVER_NAME
from harness.server_parser import ServerParser
from harness.specs import import_object
from harness.stderr_log import StderrLog
from templates.pins import pin_of, resolve_version

DEFAULT_PARSER = "reply"
ALIASES = {"reply": "reply.harness:factory"}
PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROJECT_EXPECTATIONS = "reply/expectations"
SERVER_EXPECTATIONS = "harness/server_expectations"


class ParserKind(str, Enum):
    """How a parser under test is driven."""

    PYTHON = "python"
    ORACLE = "oracle"
    COMMAND = "cmd"
    SERVER = "llama-server"


@dataclass(frozen=True)
class ParserSpec:
    """A checked `--parser` spec: its kind and target (module:factory, oracle version, or command line)."""

    text: str
    kind: ParserKind
    target: str


def parser_spec(text: str) -> ParserSpec:
    """The spec `text` names, checked without starting the parser; a ValueError says what is wrong."""
    if text == SERVER_NAME or text.startswith(f"{SERVER_NAME}:"):
        binary = text.partition(":")[2]
        if binary and not (Path(binary).is_file() and os.access(binary, os.X_OK)):
            raise ValueError(f"parser spec {text!r}: {binary} is not an executable file")
        return ParserSpec(text, ParserKind.SERVER, str(Path(binary).resolve()) if binary else "")
    if text == "oracle" or text.startswith("oracle:"):
        try:
            version = resolve_version(text.partition(":")[2] or None)
            pin_of(version)
        except KeyError as error:
            raise ValueError(f"parser spec {text!r}: {error.args[0]}") from None
        return ParserSpec(text, ParserKind.ORACLE, version)
    if text.startswith("cmd:"):
        command = text[len("cmd:") :]
        argv = shlex.split(command)
        if not argv or shutil.which(argv[0]) is None:
            raise ValueError(f"parser spec {text!r}: no executable {argv[0] if argv else ''!r}")
        return ParserSpec(text, ParserKind.COMMAND, command)
    full = ALIASES.get(text, text)
    if ":" not in full:
        raise ValueError(
            f"parser spec {text!r}: expected reply, oracle[:VERSION], llama-server[:PATH], cmd:COMMAND or "
            "pkg.module:factory"
        )
    _, factory = import_object(full, "parser spec")
    if not callable(factory):
        raise ValueError(  # noqa: TRY004 - a wrong spec is wrong input, a ValueError as every spec error
            f"parser spec {text!r}: {full.rpartition(':')[2]} is not callable")
    return ParserSpec(text, ParserKind.PYTHON, full)


def load_parser(
    spec: ParserSpec, timeout: float = DEFAULT_TIMEOUT, oracle_cache: Path | None = None,
    stderr_log: Path | None = None,
) -> ParserUnderTest:
    """The parser a checked spec names; the oracle reads through `oracle_cache` as the sweep's oracle does; a
    program's stderr goes to `stderr_log` (bounded, `StderrLog`) when given."""
    if spec.kind is ParserKind.ORACLE:
        cache = OracleCache(oracle_cache) if oracle_cache else None
        return OracleParser(OracleReads(OracleIdentity.of(spec.target), cache, timeout))
    if spec.kind is ParserKind.SERVER:
        return ServerParser(Path(spec.target) if spec.target else None, timeout)
    if spec.kind is ParserKind.COMMAND:
        return CommandParser(spec.target, timeout, StderrLog(stderr_log) if stderr_log else None)
    return PythonParser(spec.target, timeout)


def expectations_path(declared: str | None) -> Path | None:
    """The directory a run's stamp names as its expectations (a relative one is the project root's)."""
    if not declared:
        return None
    path = Path(declared)
    return path if path.is_absolute() else PROJECT_ROOT / path


def expectations_directory(spec: ParserSpec, given: Path | None) -> str | None:
    """Where the parser's expectations live, as the run's stamp records it: the directory its maintainer names,
    the project's (relative to the project root) for `reply`, the llama-server defects the oracle cannot see
    for `llama-server`, none otherwise (llama.cpp itself expects to match everywhere)."""
    if given is None:
        if spec.kind is ParserKind.SERVER:
            return SERVER_EXPECTATIONS
        return PROJECT_EXPECTATIONS if spec.text == DEFAULT_PARSER else None
    resolved = given.resolve()
    missing = not resolved.is_dir()
    if missing:
        raise ValueError(f"--expectations {given}: no such directory (it holds known_divergences.toml, baseline/)")
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(resolved)
