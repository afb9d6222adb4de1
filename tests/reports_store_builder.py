"""A fluent builder of small hand-made run stores for the reports tests."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatparity.model import Row, SessionRecord, record_from
from harness.outcome_labels import reading_digest
from harness.store import connect, write_records, write_stamp

STAMP = {
    "llama_cpp_commit": "abc123",
    "sdist_sha256": "f00d",
    "oracle_build": "b1",
    "llama_cpp_python_version": "0.3.36",
    "parser": "reply",
    "expectations": None,
    "parser_revision": "r1",
    "profile": "quick",
    "seeds": [1],
    "template_index_hash": "idx1",
    "chunkings": ["whole", "char"],
    "normalisations": ["arguments as JSON"],
}
MESSAGE = {"content": "Hello", "reasoning_content": "", "tool_calls": []}
MISMATCHED = dict(MESSAGE, content="Hel")
MISMATCH_READ = " @" + reading_digest(json.dumps(MISMATCHED))
"""What a mismatch label of a row this builder writes carries: the digest of its parser reading."""


@dataclass
class StoreBuilder:
    """Collects sessions and rows, then writes them to `directory/rows.sqlite`."""

    directory: Path
    stamp: dict[str, Any] = field(default_factory=lambda: dict(STAMP))
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def session(
        self,
        template: str,
        family: str = "fam",
        syntax: str = "json",
        mode: str = "nothink/none",
        **overrides: Any,
    ) -> StoreBuilder:
        """Add a session (id `template|mode`) with defaults for every column."""
        session_id = f"{template}|{mode}"
        record = {
            "session_id": session_id,
            "template": template,
            "family": family,
            "syntax": syntax,
            "mode": mode,
            "thinking": int(mode.startswith("think")),
            "tools": mode.split("/")[1],
            "kwargs": "{}",
            "conversation": "plain",
            "jinja_renders": 1,
            "oracle_renders": 1,
            "prompt_parity": "equal",
            "oracle_format": "generic",
            "status": "ok",
            "error": "",
        }
        record.update(overrides)
        self.sessions[record["session_id"]] = record
        return self

    def row(
        self,
        case: str,
        template: str,
        chunking: str = "whole",
        outcome: str = "match",
        kind: str = "",
        mode: str = "nothink/none",
        **overrides: Any,
    ) -> StoreBuilder:
        """Add a row of a case under a chunking; the session is added with defaults if missing."""
        session_id = f"{template}|{mode}"
        if session_id not in self.sessions:
            self.session(template, mode=mode)
        session = self.sessions[session_id]
        streamed = chunking != "whole"
        parser = MISMATCHED if outcome == "mismatch" else MESSAGE
        record = {
            "case_id": case,
            "chunking": chunking,
            "session_id": session_id,
            "template": template,
            "family": session["family"],
            "syntax": session["syntax"],
            "mode": mode,
            "tools": session["tools"],
            "conversation": "plain",
            "origin": "roundtrip",
            "shape": "plain",
            "partial": 0,
            "outcome": outcome,
            "kind": kind,
            "detail": "content @3: 'lo' vs ''" if outcome == "mismatch" else "",
            "consistent": 1 if streamed else None,
            "monotonic": 1 if streamed else None,
            "clean": 1 if streamed else None,
            "snapshot_parity": 1 if streamed else None,
            "stream_detail": "",
            "oracle_vs_truth": None,
            "parser_vs_truth": None,
            "reply": "Hello",
            "truth": None,
            "oracle_reading": json.dumps(MESSAGE),
            "parser_reading": json.dumps(parser),
            "error": "boom" if outcome.endswith(("crashed", "timeout")) else "",
        }
        record.update(overrides)
        self.rows.append(record)
        return self

    def write(self) -> Path:
        """Write the store and return the run directory."""
        connection = connect(self.directory)
        write_stamp(connection, self.stamp)
        write_records(connection, [record_from(SessionRecord, record) for record in self.sessions.values()])
        write_records(connection, [record_from(Row, record) for record in self.rows])
        connection.close()
        return self.directory
