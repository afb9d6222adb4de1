"""One session of a sweep: oracle and parser read every reply at every chunking; rows out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatparity.model import (
    Case,
    Message,
    NotWritten,
    Outcome,
    ParserCrashed,
    ParserRenderFailed,
    ParserTimeout,
    ParserUnderTest,
    ParserUnsupported,
    Reading,
    Rejection,
    Reply,
    Row,
    Session,
    SessionReader,
    SessionRecord,
    SessionStatus,
    ToolMode,
    canonical_json,
    reading_json,
    record_from,
)
from corpora import call_shapes
from corpora.parity import prompt_parity
from harness import chunkings, oracle_stream
from harness.compare import Difference, calls_only, compare, verdict
from harness.known_divergences import GLOB_FIELDS, NO_DIVERGENCES, KnownDivergences
from harness.labels import (
    StreamLabels,
    counts_of,
    counts_text,
    final_label,
    first_retraction,
    first_shown,
    shown_last,
)
from harness.oracle_reads import (
    OracleFailed,
    OracleReads,
    OracleSession,
    RenderFailed,
    RenderInfo,
)
from harness.policies import NO_POLICIES, Policies
from harness.policy_rules import Point, takes_back
from harness.problem_checks import Asked
from harness.server_view import ServerStream, server_final
from harness.stream_checks import StreamVerdict, check_stream
from harness.structural_checks import Structure, check_reading, combined_structure, tool_schemas
from oracle.partial_reads import PartialReads
from oracle.vocabs import Vocab, vocab_named, vocab_of_family

Applies = Callable[[str, Reply], bool]


@dataclass(frozen=True)
class SessionResult:
    """A session's record for the `sessions` table and its rows for the `rows` table."""

    session: SessionRecord
    rows: tuple[Row, ...] = field(default=())


def failure_outcome(error: Exception) -> Outcome:
    """The outcome a parser or oracle failure gives a row."""
    if isinstance(error, OracleFailed):
        return error.outcome
    if isinstance(error, NotWritten):
        return Outcome.NOT_WRITTEN
    return Outcome.PARSER_TIMEOUT if isinstance(error, ParserTimeout) else Outcome.PARSER_CRASHED


@dataclass
class CaseRun:
    """Everything read of one case that its rows share."""

    case: Case
    base: dict[str, Any]
    oracle: OracleSession
    markers: tuple[str, ...] = ()
    oracle_final: Reading | OracleFailed | None = None
    oracle_partials: PartialReads | OracleFailed | None = None
    kept: frozenset[int] = frozenset()
    parser_whole: Reading | Exception | None = None
    tokens: chunkings.TokenPieces | OracleFailed | None = None
    leak_markers: tuple[str, ...] = ()
    structures: dict[tuple[Reading, tuple[str, ...] | None, Reading | None], Structure] = field(
        default_factory=dict
    )
    streams: dict[str, list[tuple[chunkings.Stream, tuple[int, ...]]]] = field(default_factory=dict)
    written: dict[tuple[Reading, tuple[str, ...] | None], str | None] = field(default_factory=dict)
    views: list[PartialReads | None] = field(default_factory=list)
    first_shown: list[int | None] = field(default_factory=list)
    first_retraction: list[tuple[int, Message] | None] = field(default_factory=list)

    def char_views(self) -> PartialReads | None:
        """What llama-server shows at every prefix of the reply streamed one character at a time: the union
        stream's views where that read every prefix, else one stream of every prefix asked of llama.cpp (None
        where llama.cpp failed)."""
        if not self.views:
            partials = self.oracle_partials
            text = self.case.reply.text
            if not (isinstance(partials, PartialReads) and len(partials) >= len(text)):
                try:
                    partials = self.oracle.partials(text, list(range(1, len(text) + 1)))
                except OracleFailed:
                    partials = None
            self.views.append(partials)
        return self.views[0]

    def stream_end(self) -> Message | None:
        """What llama.cpp's character-by-character stream of the reply showed last before it first took anything
        back (None where it ended on a rejection or llama.cpp failed)."""
        views = self.char_views()
        return shown_last(view for _, view in views.items()) if views else None

    def shown_before(self, end: int) -> bool:
        """Whether llama.cpp's character-by-character stream showed something before prefix `end`."""
        if not self.first_shown:
            views = self.char_views()
            self.first_shown.append(first_shown(views.items()) if views else None)
        shown = self.first_shown[0]
        return shown is not None and shown < end

    def taken_back_before(self, end: int, reading: Message) -> bool:
        """Whether llama.cpp's character-by-character stream took something back before prefix `end`, having
        shown before then what `reading` lacks."""
        if not self.first_retraction:
            views = self.char_views()
            self.first_retraction.append(first_retraction(views.items()) if views else None)
        found = self.first_retraction[0]
        return found is not None and found[0] <= end and takes_back(found[1], reading)

    def reading_json(self, reading: Reading) -> str | None:
        """`reading_json` of a reading, written once per case for readings alike (problems included)."""
        key = (reading, reading.problems)
        if key not in self.written:
            self.written[key] = reading_json(reading)
        return self.written[key]


class SessionRunner:
    """Runs one planned session against the oracle and the parser under test."""

    def __init__(
        self,
        planned: Any,
        replies: Sequence[Reply],
        parser: ParserUnderTest,
        oracle: OracleReads,
        chunking_names: Sequence[str],
        applies: Applies,
        selected: Collection[tuple[str, str]] | None = None,
        policies: Policies = NO_POLICIES,
        known: KnownDivergences = NO_DIVERGENCES,
    ) -> None:
        self.planned = planned
        self.session: Session = planned.session
        self.entry = planned.entry
        self.replies = replies
        self.parser = parser
        self.oracle = oracle
        self.chunking_names = tuple(chunking_names)
        self.applies = applies
        self.selected = None if selected is None else set(selected)
        self.schemas = tool_schemas(self.session)
        self.asked = Asked.of(self.session)
        self.policies = policies
        self.known = known

    def record(
        self, status: SessionStatus, oracle_prompt: str | None, oracle_format: str, error: str
    ) -> SessionRecord:
        """The session's line in the `sessions` table."""
        mode = self.session.mode
        return SessionRecord(
            session_id=self.session.id,
            template=self.session.template,
            family=self.entry.family,
            syntax=self.entry.syntax,
            mode=mode.label,
            thinking=int(mode.thinking),
            tools=mode.tools.value,
            kwargs=canonical_json(mode.kwargs_dict),
            conversation=self.session.conversation,
            jinja_renders=int(self.session.prompt is not None),
            oracle_renders=int(oracle_prompt is not None),
            prompt_parity=prompt_parity(self.planned, oracle_prompt, error if oracle_prompt is None else ""),
            oracle_format=oracle_format,
            status=status.value,
            error=error,
        )

    def markers(self, render: RenderInfo) -> tuple[str, ...]:
        """The template's markers and thinking tags, and the call starts and special tokens of llama.cpp's render,
        for the clean check and the policies that hold a marker back."""
        found = list(getattr(self.entry, "markers", ()) or ())
        found += [getattr(self.entry, "think_start", ""), getattr(self.entry, "think_end", "")]
        found += [render.thinking_start_tag, *render.thinking_end_tags, *render.call_markers]
        return tuple(dict.fromkeys(marker for marker in found if marker))

    def leak_markers(self, render: RenderInfo) -> tuple[str, ...]:
        """The markers the no_leakage check looks for: the thinking tags, and the template's other markers
        where the request lets calls be read (without tools, or with tool_choice none, a call's text is the
        reply's content). llama.cpp's first end tag is the thinking tag; the others end a thought where a call
        starts. With reasoning_format none a thought stays in the content as written, its tags with it (and any
        marker a tag holds)."""
        thinking = [getattr(self.entry, "think_start", ""), getattr(self.entry, "think_end", "")]
        thinking += [render.thinking_start_tag, *render.thinking_end_tags[:1]]
        calls_read = self.session.mode.tools not in (ToolMode.NONE, ToolMode.CHOICE_NONE)
        if self.session.reasoning_format == "none":
            tags = [tag for tag in thinking + list(render.thinking_end_tags) if tag]
            return tuple(marker for marker in self.markers(render)
                         if not any(marker in tag for tag in tags)) if calls_read else ()
        if not calls_read:
            return tuple(dict.fromkeys(marker for marker in thinking if marker))
        return self.markers(render)

    def vocab(self) -> Vocab:
        """The tokenizer the token chunkings cut this session's replies with: the index's, else the family's."""
        name = getattr(self.entry, "vocab", "")
        return vocab_named(name) if name else vocab_of_family(self.entry.family)

    def cases(self) -> list[tuple[Case, tuple[str, ...]]]:
        """Each case with the chunkings it runs at (after the profile's rule and any row selection)."""
        planned: list[tuple[Case, tuple[str, ...]]] = []
        for reply in self.replies:
            case = Case(self.session, reply)
            names = tuple(
                name
                for name in self.chunking_names
                if self.applies(name, reply)
                and (name == "whole" or chunkings.makes_streams(name, reply.text))
                and (self.selected is None or (case.id, name) in self.selected)
            )
            if names:
                planned.append((case, names))
        return planned

    def run(self) -> SessionResult:
        """Render, open the parser, and read every case."""
        oracle = self.oracle.session(self.session)
        try:
            render = oracle.render()
        except RenderFailed as error:
            return SessionResult(self.record(SessionStatus.ORACLE_ERROR, None, "", str(error)))
        except OracleFailed as error:
            message = f"{error.outcome.value}: {error}"
            rows = [
                self.row(self.base(case), name, error.outcome, error=f"render: {error}")
                for case, names in self.cases()
                for name in names
            ]
            return SessionResult(self.record(SessionStatus.ORACLE_ERROR, None, "", message), tuple(rows))
        status = SessionStatus.JINJA2_ERROR if self.planned.jinja_error else SessionStatus.OK
        cases = self.cases()
        try:
            reader: SessionReader | Exception = self.parser.open(self.session)
        except ParserUnsupported as error:
            failed = isinstance(error, ParserRenderFailed)
            declined = SessionStatus.RENDER_FAILED if failed else SessionStatus.UNSUPPORTED
            record = self.record(declined, render.prompt, render.format, str(error))
            leaks = self.leak_markers(render)
            rows = [
                row
                for case, names in cases
                for row in self.unsupported_rows(oracle, case, names, str(error), leaks)
            ]
            return SessionResult(record, tuple(rows))
        except (ParserCrashed, ParserTimeout, NotWritten) as error:
            reader = error
        record = self.record(
            status,
            render.prompt,
            render.format,
            f"parser open: {reader}" if isinstance(reader, Exception) else "",
        )
        markers = self.markers(render)
        leaks = self.leak_markers(render)
        rows = []
        for case, names in cases:
            rows += self.case_rows(oracle, reader, case, names, markers, leaks)
        if not isinstance(reader, Exception):
            reader.close()
        return SessionResult(record, tuple(rows))

    def base(self, case: Case) -> dict[str, Any]:
        """The row columns every chunking of a case shares."""
        mode, reply = self.session.mode, case.reply
        return {
            "case_id": case.id,
            "session_id": self.session.id,
            "template": self.session.template,
            "family": self.entry.family,
            "syntax": self.entry.syntax,
            "mode": mode.label,
            "tools": mode.tools.value,
            "conversation": self.session.conversation,
            "origin": reply.origin,
            "shape": reply.shape,
            "partial": int(reply.partial),
            "reply": reply.text,
            "truth": reading_json(reply.truth),
        }

    @staticmethod
    def row(base: dict[str, Any], chunking: str, outcome: Outcome, **columns: Any) -> Row:
        """A full row: the case's columns, the chunking, the outcome and the rest (defaults empty)."""
        return record_from(Row, {**base, "chunking": chunking, "outcome": outcome.value, **columns})

    def unsupported_rows(
        self, oracle: OracleSession, case: Case, names: tuple[str, ...], reason: str, leaks: tuple[str, ...]
    ) -> list[Row]:
        """The rows of a case in a session the parser declined; where the reply has a truth, llama.cpp's whole
        reading is still judged against it, so its defects show whichever templates the parser declines."""
        columns: dict[str, Any] = {}
        truth = case.reply.truth
        if truth is not None:
            try:
                final = oracle.parse(case.reply.text, case.reply.partial)
            except OracleFailed:
                final = None
            if final is not None:
                columns = {
                    "oracle_reading": reading_json(final),
                    "oracle_vs_truth": self.truth_verdict(truth, final, final),
                    **check_reading(final, case.reply, self.schemas, leaks, self.asked).columns("oracle_"),
                }
        return [self.row(self.base(case), name, Outcome.UNSUPPORTED, error=reason, **columns) for name in names]

    def case_rows(
        self,
        oracle: OracleSession,
        reader: SessionReader | Exception,
        case: Case,
        names: tuple[str, ...],
        markers: tuple[str, ...],
        leaks: tuple[str, ...],
    ) -> list[Row]:
        """The rows of one case: the shared oracle reads once, then each chunking; `leaks` are the markers of
        the no_leakage check."""
        reply = case.reply
        run = CaseRun(case, self.base(case), oracle, markers, leak_markers=leaks)
        try:
            run.oracle_final = oracle.parse(reply.text, reply.partial)
        except OracleFailed as error:
            run.oracle_final = error
        streamed = [name for name in names if name != "whole"]
        if any(chunkings.needs_tokens(name) for name in streamed):
            try:
                run.tokens = oracle.reads.tokens(self.vocab(), reply.text)
            except OracleFailed as error:
                run.tokens = error
                streamed = [name for name in streamed if not chunkings.needs_tokens(name)]
        tokens = run.tokens if isinstance(run.tokens, chunkings.TokenPieces) else None
        for name in streamed:
            run.streams[name] = [(chunks, chunkings.boundaries(chunks))
                                 for chunks in chunkings.streams(name, reply.text, tokens)]
        union = chunkings.all_boundaries(ends for made in run.streams.values() for _, ends in made)
        try:
            run.oracle_partials = oracle.partials(reply.text, union)
            run.kept = oracle.kept_at(reply.text, union)
        except OracleFailed as error:
            run.oracle_partials = error
        run.base.update(oracle_stream.case_columns(oracle, reply, run.char_views(), run.oracle_final, markers))
        streamed_rows = {name: self.streamed_row(run, reader, name, markers)
                         for name in names if name != "whole"}
        rows = [self.whole_row(run, reader) if name == "whole" else streamed_rows[name] for name in names]
        return rows

    def whole_read(self, run: CaseRun, reader: SessionReader | Exception) -> Reading | Exception:
        """The parser's whole read of the case's reply, read once, when a row first needs it (after the
        streams of the first chunking: a parser may find there what it read of them)."""
        if run.parser_whole is None:
            if isinstance(reader, Exception):
                run.parser_whole = reader
            else:
                try:
                    run.parser_whole = reader.parse(run.case.reply.text, run.case.reply.partial)
                except (ParserCrashed, ParserTimeout, NotWritten) as error:
                    run.parser_whole = error
        return run.parser_whole

    def truth_columns(
        self, run: CaseRun, oracle_final: Reading, parser_final: Reading | None
    ) -> dict[str, Any]:
        """oracle_vs_truth and parser_vs_truth, where the reply has a truth."""
        truth = run.case.reply.truth
        if truth is None:
            return {}
        return {
            "oracle_vs_truth": self.truth_verdict(truth, oracle_final, oracle_final),
            "parser_vs_truth": None if parser_final is None else self.truth_verdict(truth, parser_final, oracle_final),
        }

    def truth_verdict(self, truth: Reading, reading: Reading, ids_from: Reading) -> str:
        """How a reading departs from the reply's truth ('match' where it does not). With reasoning_format none
        a thought stays in the content as written, where the truth sets it apart, so only a refusal and the
        calls are judged."""
        if self.session.reasoning_format == "none":
            return verdict(calls_only(truth), calls_only(reading), ids_from=ids_from)
        return verdict(truth, reading, ids_from=ids_from)

    def case_structure(self, run: CaseRun, reading: Reading, reference: Reading | None = None) -> Structure:
        """The structural checks of one finished reading of the case (the parser's against llama.cpp's
        `reference`; None for llama.cpp's own), judged once per distinct reading, problems and reference."""
        key = (reading, reading.problems, reference)
        found = run.structures.get(key)
        if found is None:
            found = run.structures[key] = check_reading(
                reading, run.case.reply, self.schemas, run.leak_markers, self.asked, reference
            )
        return found

    def known_values(self, run: CaseRun, chunking: str) -> tuple[str, ...]:
        """A row's values of the fields known divergences select rows by."""
        return tuple(str(run.base[name]) if name in run.base else chunking for name in GLOB_FIELDS)

    def explained(self, run: CaseRun, chunking: str, reference: Reading, parser_final: Reading,
                  found: Difference | None) -> str:
        """The label of a difference between llama.cpp's reading of the whole reply and the parser's: the
        parser's policies that predict it, the known divergence selecting the row, or the llama.cpp defect behind
        it ('' for none); a matching row a known divergence selects is its unexpected match. A streamed reference
        of a cut reply is llama-server's last view, which may be stale."""
        values = self.known_values(run, chunking)
        if found is None:
            return self.known.explain(values, "")
        streamed = chunking != "whole"
        reply = run.case.reply
        point = Point(reply.text, reply.partial, run.markers, run.stream_end())
        readings = [reference]
        if streamed and isinstance(run.oracle_final, (Message, Rejection)) and run.oracle_final != reference:
            readings.append(run.oracle_final)

        def stale() -> bool:
            return streamed and reply.partial and len(reply.text) in run.kept

        known = self.known.explain(values, found.kind.value)
        declared = frozenset(call_shapes.tool_name(tool) for tool in run.case.session.tools)
        return final_label(readings, parser_final, point, self.policies, stale, known, reply.truth, declared) or ""

    def judged(
        self, run: CaseRun, chunking: str, reference: Reading, parser_final: Reading, found: Difference | None,
        label: str = "", streams: dict[str, Any] | None = None,
    ) -> Row:
        """A row both sides read: match or mismatch (`found`, their difference, with its label), with truth and
        structural checks; `label` names the stream; `streams`, a streamed row's columns judged over all its
        streams, replace the structural checks of this one (a check the policies explaining the row break by
        their own rule left unjudged)."""
        outcome = Outcome.MISMATCH if found else Outcome.MATCH
        explained = self.explained(run, chunking, reference, parser_final, found)
        if streams and explained:
            streams = {**streams, **dict.fromkeys(self.policies.broken_by(explained))}
        columns = {
            "kind": found.kind.value if found else "",
            "detail": (found.detail + (f" ({label})" if label else "")) if found else "",
            "explained": explained,
            "oracle_reading": run.reading_json(reference),
            "parser_reading": run.reading_json(parser_final),
            **self.truth_columns(run, reference, parser_final),
            **self.case_structure(run, parser_final, reference).columns(),
            **self.case_structure(run, reference).columns("oracle_"),
            **(streams or {}),
        }
        return self.row(run.base, chunking, outcome, **columns)

    def whole_row(self, run: CaseRun, reader: SessionReader | Exception) -> Row:
        """The `whole` row: the parser's whole read against the oracle's."""
        parsed = self.whole_read(run, reader)
        if isinstance(run.oracle_final, OracleFailed):
            return self.row(run.base, "whole", run.oracle_final.outcome, error=str(run.oracle_final))
        assert run.oracle_final is not None
        if isinstance(parsed, Exception):
            return self.row(
                run.base,
                "whole",
                failure_outcome(parsed),
                error=str(parsed),
                oracle_reading=run.reading_json(run.oracle_final),
                **self.truth_columns(run, run.oracle_final, None),
                **self.case_structure(run, run.oracle_final).columns("oracle_"),
            )
        return self.judged(run, "whole", run.oracle_final, parsed, compare(run.oracle_final, parsed))

    def streamed_row(
        self,
        run: CaseRun,
        reader: SessionReader | Exception,
        name: str,
        markers: tuple[str, ...],
    ) -> Row:
        """A streamed row: every stream of the chunking read, its final compared, its invariants checked (a
        cut reply's final is its last snapshot, whose problems are not judged: only a whole read reports
        them)."""
        final, partials = run.oracle_final, run.oracle_partials
        tokens = run.tokens if chunkings.needs_tokens(name) else None
        for failed in (final, partials, tokens):
            if isinstance(failed, OracleFailed):
                return self.row(run.base, name, failed.outcome, error=str(failed))
        assert isinstance(final, (Message, Rejection)) and isinstance(partials, PartialReads)
        if isinstance(reader, Exception):
            return self.row(
                run.base,
                name,
                failure_outcome(reader),
                error=f"open: {reader}",
                oracle_reading=run.reading_json(final),
            )
        reply = run.case.reply
        first: tuple[Reading, Reading, Difference | None, str] | None = None
        verdicts: list[StreamVerdict] = []
        structures: list[Structure] = []
        oracle_structures: list[Structure] = []
        for chunks, ends in run.streams[name]:
            label = f"cut {len(chunks[0])}" if name == "split" else ""
            try:
                expected = ServerStream(ends, partials, run.kept)
                read = reader.stream(chunks, finish=not reply.partial)
            except OracleFailed as error:
                return self.row(run.base, name, error.outcome, error=str(error))
            except (ParserCrashed, ParserTimeout, NotWritten) as error:
                return self.row(
                    run.base,
                    name,
                    failure_outcome(error),
                    error=f"{error} ({label})" if label else str(error),
                    oracle_reading=run.reading_json(final),
                )
            parsed = self.whole_read(run, reader)
            whole = None if isinstance(parsed, Exception) else parsed
            labels = StreamLabels(reply.text, ends, expected, run.kept, run, self.policies, markers)
            found = check_stream(read.snapshots, ends, read.final, whole, expected, markers, labels)
            verdicts.append(found.labelled(label) if label else found)
            reference = server_final(expected, final, reply.partial)
            judged_final = without_problems(read.final) if reply.partial else read.final
            structures.append(self.case_structure(run, judged_final, reference).labelled(label))
            oracle_structures.append(self.case_structure(run, reference).labelled(label))
            if first is None or first[2] is None:
                differs = compare(reference, read.final)
                if first is None or differs:
                    first = (reference, read.final, differs, label)
        assert first is not None
        reference, parser_final, differs, label = first
        streams = {
            **combined(verdicts),
            **combined_structure(structures).columns(),
            **combined_structure(oracle_structures).columns("oracle_"),
        }
        return self.judged(run, name, reference, parser_final, differs, label, streams)


def without_problems(reading: Reading) -> Reading:
    """The reading without the problems its parser reported."""
    if isinstance(reading, Rejection):
        return Rejection(reading.reason)
    return Message(reading.content, reading.reasoning_content, reading.tool_calls)


def combined(verdicts: Sequence[StreamVerdict]) -> dict[str, Any]:
    """The stream columns of a row: each invariant held in every stream; the first broken one named; how many
    snapshots break `clean` and `snapshot_parity` in all its streams."""

    def every(values: list[bool | None]) -> int | None:
        known = [value for value in values if value is not None]
        return int(all(known)) if known else None

    return {
        "consistent": every([v.consistent for v in verdicts]),
        "monotonic": every([v.monotonic for v in verdicts]),
        "clean": every([v.clean for v in verdicts]),
        "snapshot_parity": every([v.snapshot_parity for v in verdicts]),
        "stream_detail": next((v.detail for v in verdicts if v.detail), ""),
        "clean_breaks": sum(v.clean_breaks for v in verdicts) if verdicts else None,
        "parity_breaks": (
            sum(v.parity_breaks for v in verdicts)
            if any(v.snapshot_parity is not None for v in verdicts)
            else None
        ),
        "parity_explained": counts_text(sum((counts_of(v.explained) for v in verdicts), Counter())),
    }
