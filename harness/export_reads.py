"""The oracle's answers as an export holds them: kept while an export is made, read back by a sweep with
`--oracle FILE` in place of llama.cpp."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chatparity.model import Outcome, Session, canonical_json
from harness.export_file import SessionLines, export_identity
from harness.oracle_cache import OracleCache
from harness.oracle_reads import TOKENIZE, OracleFailed, OracleIdentity, OracleReads, OracleSession


class RecordingReads(OracleReads):
    """The cached oracle, keeping every answer it gives (its parts and value) until `taken`."""

    def __init__(self, identity: OracleIdentity, cache: OracleCache | None, timeout: float = 30.0) -> None:
        super().__init__(identity, cache, timeout)
        self.recorded: dict[str, list[Any]] = {}

    def answer(self, parts: Sequence[Any], compute: Callable[[], Any]) -> Any:
        """The answer, kept."""
        value = super().answer(parts, compute)
        self.recorded[canonical_json(list(parts))] = [list(parts), value]
        return value

    def taken(self) -> list[list[Any]]:
        """The answers kept since the last call, in the order first given."""
        found = list(self.recorded.values())
        self.recorded.clear()
        return found


class ExportReads(OracleReads):
    """The oracle's answers read from an export, one session's at a time; an answer it lacks is
    oracle_crashed (llama.cpp is never asked)."""

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        super().__init__(export_identity(path), None, timeout)
        self.path = path
        self.lines = SessionLines(path)
        self.answers: dict[str, Any] = {}

    def session(self, session: Session) -> OracleSession:
        """The oracle's view of one session, its answers read from the export."""
        self.answers = self.lines.answers(session.id)
        return super().session(session)

    def answer(self, parts: Sequence[Any], compute: Callable[[], Any]) -> Any:
        """The export's answer; OracleFailed where it has none."""
        found = self.answers.get(canonical_json(list(parts)))
        if found is None:
            what = parts[0] if parts[0] == TOKENIZE else parts[1]
            raise OracleFailed(Outcome.ORACLE_CRASHED, f"not in the export {self.path}: its {what} answer")
        return found
