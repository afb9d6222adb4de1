"""llama.cpp's own stream of a case judged on its own, as llama-server runs it, and whether a model under
llama.cpp's grammar for the request can write the reply: the two columns the oracle defects report reads.

llama-server reads the text so far at every token (`update_chat_msg`), keeps its message where the partial parse
comes back empty, and sends the differences from the message before (`compute_diffs`). Streamed one code point at
a time, a reply's stream breaks when a snapshot takes back what an earlier one showed (`retraction`, with the diff
error that ends the stream; `silent_shrink`, where no diff is sent and a client keeps the longer text; as
`marker_dropped` where what is taken back is a marker or its start), when a partial parse comes back empty after
something was shown (`empty_parse`: the server keeps a stale view that depends on the chunks), and when a partial
parse throws while the finished reply reads (`error_mid_stream`: llama-server ends the stream with an error).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

from chatparity.model import Message, Reading, Rejection, Reply, reading_to_json
from harness.oracle_reads import OracleFailed, OracleSession
from harness.server_diffs import InvalidDiff, applied, shrinks
from oracle.partial_reads import PartialReads

EMPTY = Message()
KINDS = ("retraction", "marker_dropped", "silent_shrink", "empty_parse", "error_mid_stream")
"""The stream defects, most severe first (a case is reported under its first)."""
SHORTEST_MARKER_START = 2


@dataclass(frozen=True)
class StreamDefect:
    """One way llama.cpp's stream of a reply breaks: at prefix `at` (the reply's length and `finish` for the
    finished read), the view llama-server showed from prefix `shown_at` (`shown`) and what it reads at `at`
    (`later`), the diff error that ends the stream ('' for none), the field that breaks, the marker taken back,
    and what a client applying llama-server's diffs holds at the end (`client`, where it differs from the
    server's last message)."""

    kind: str
    at: int
    shown_at: int
    shown: Message
    later: Reading
    finish: bool = False
    error: str = ""
    field: str = ""
    marker: str = ""
    client: Message | None = None

    def to_json(self) -> dict[str, Any]:
        """This defect as a plain dict (the store's JSON)."""
        return {
            "kind": self.kind,
            "at": self.at,
            "shown_at": self.shown_at,
            "finish": self.finish,
            "shown": reading_to_json(self.shown),
            "later": reading_to_json(self.later),
            "error": self.error,
            "field": self.field,
            "marker": self.marker,
            "client": None if self.client is None else reading_to_json(self.client),
        }


def taken_back(before: Message, after: Message, field: str) -> str:
    """The text of `field` that `after` no longer holds of `before`'s ('' for a whole call)."""
    if field in ("reasoning_content", "content"):
        old, new = getattr(before, field), getattr(after, field)
    elif field.endswith(".arguments"):
        index = int(field[len("tool_calls["):field.index("]")])
        old, new = before.tool_calls[index].arguments, after.tool_calls[index].arguments
    else:
        return ""
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    return old[same:]


def dropped_marker(text: str, markers: Sequence[str]) -> str:
    """The marker `text` holds, or the marker whose start it is (of two code points or more), else ''."""
    stripped = text.strip()
    for marker in sorted(markers, key=len, reverse=True):
        if marker in text or (len(stripped) >= SHORTEST_MARKER_START and marker.startswith(stripped)):
            return marker
    return ""


def changed_field(before: Message, after: Message) -> str:
    """The first field an invalid diff breaks on, as compute_diffs checks them."""
    for field in ("reasoning_content", "content"):
        old, new = getattr(before, field), getattr(after, field)
        if old and old != new and not new.startswith(old) and not old.startswith(new):
            return field
    if len(after.tool_calls) < len(before.tool_calls):
        return "tool_calls"
    index = len(before.tool_calls) - 1
    if before.tool_calls[index].name != after.tool_calls[index].name:
        return f"tool_calls[{index}].name"
    return f"tool_calls[{index}].arguments"


def judge_stream(
    text: str, views: Iterable[tuple[int, Reading]], kept: frozenset[int], final: Reading | None,
    markers: Sequence[str],
) -> list[StreamDefect]:
    """The first defect of each kind in llama-server's stream of `text` one code point at a time: `views` are its
    snapshots by prefix length (prefix end, snapshot; shortest first), `kept` the prefixes whose partial parse
    came back empty, `final` the finished read (None for a cut reply, whose stream ends at its last
    snapshot)."""
    found: dict[str, StreamDefect] = {}
    shown, shown_at, client = EMPTY, 0, EMPTY
    accepted = isinstance(final, Message)
    finished = [] if final is None else [(len(text), final, True)]
    steps = chain(((end, view, False) for end, view in views), finished)
    for end, view, finish in steps:
        if isinstance(view, Rejection):
            if accepted and not finish:
                found.setdefault("error_mid_stream", StreamDefect("error_mid_stream", end, shown_at, shown, view,
                                                                  error=view.reason))
            continue
        if (end in kept and not finish) or (finish and view == EMPTY):
            if shown != EMPTY:
                found.setdefault("empty_parse", StreamDefect("empty_parse", end, shown_at, shown, EMPTY, finish))
            continue
        if view == shown:
            continue
        try:
            client = applied(client, shown, view)
        except InvalidDiff as error:
            field = changed_field(shown, view)
            marker = dropped_marker(taken_back(shown, view, field), markers)
            kind = "marker_dropped" if marker else "retraction"
            found.setdefault(kind, StreamDefect(kind, end, shown_at, shown, view, finish, str(error), field, marker,
                                                client))
            break
        field = shrinks(shown, view)
        if field:
            marker = dropped_marker(taken_back(shown, view, field), markers)
            kind = "marker_dropped" if marker else "silent_shrink"
            found.setdefault(kind, StreamDefect(kind, end, shown_at, shown, view, finish, "", field, marker))
        shown, shown_at = view, end
    ended = []
    for defect in found.values():
        if defect.kind in ("silent_shrink", "marker_dropped") and not defect.error:
            defect = replace(defect, client=client if client != shown else None)
        ended.append(defect)
    return sorted(ended, key=lambda defect: KINDS.index(defect.kind))


def stream_column(defects: Sequence[StreamDefect]) -> str:
    """The defects as the store keeps them: JSON, '' for none."""
    return json.dumps([defect.to_json() for defect in defects], ensure_ascii=False, sort_keys=True) if defects else ""


def case_columns(
    oracle: OracleSession,
    reply: Reply,
    views: PartialReads | None,
    final: Reading | OracleFailed | None,
    markers: Sequence[str],
) -> dict[str, str]:
    """The case's `oracle_stream` (its stream defects, judged where llama.cpp read every prefix and the whole
    reply) and `oracle_grammar` (llama.cpp's grammar verdict on the reply, '' where llama.cpp failed)."""
    columns = {"oracle_stream": "", "oracle_grammar": ""}
    if views is not None and isinstance(final, (Message, Rejection)):
        try:
            kept = oracle.kept_at(reply.text, views.ends)
        except OracleFailed:
            kept = None
        if kept is not None:
            ended = None if reply.partial else final
            defects = judge_stream(reply.text, views.items(), kept, ended, markers)
            columns["oracle_stream"] = stream_column(defects)
    try:
        columns["oracle_grammar"] = oracle.grammar(reply.text, reply.partial).text()
    except OracleFailed:
        pass
    return columns
