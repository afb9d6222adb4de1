"""The oracle's side of a sweep: renders, whole reads and partial reads, from the disk cache or llama.cpp."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatparity.model import Outcome, Reading, Session, canonical_json, reading_from_json, reading_to_json
from harness.chunkings import TokenPieces, token_pieces
from harness.oracle_cache import OracleCache
from harness.stream_resume import Streamed, resume_point
from oracle.build import source_hash
from oracle.client import GrammarVerdict, Oracle, OracleCrashed, OracleError, OracleTimeout
from oracle.partial_reads import PartialReads, decoded_at, read_entry, same
from oracle.vocabs import Vocab
from templates.pins import pin_of, resolve_version


@dataclass(frozen=True)
class OracleIdentity:
    """Which llama.cpp answers: llama-cpp-python version, sdist, llama.cpp commit, oracle build id."""

    version: str
    sdist_sha256: str
    llama_cpp_commit: str
    build_id: str

    @classmethod
    def of(cls, version: str | None = None) -> OracleIdentity:
        """The identity of the oracle at a version, known without starting it."""
        resolved = resolve_version(version)
        pin = pin_of(resolved)
        return cls(resolved, pin.sdist_sha256, pin.llama_cpp_commit, source_hash())


@dataclass(frozen=True)
class RenderInfo:
    """What the sweep keeps of the oracle's render of a session."""

    format: str
    prompt: str
    generation_prompt: str
    thinking_start_tag: str
    thinking_end_tags: tuple[str, ...]
    call_markers: tuple[str, ...] = ()


TRIGGER_WORD = 1
TOKENIZE = "tokenize"
LITERAL_RUN = re.compile(r"(?:[^\\.^$|?*+()\[\]{}]|\\[^\w\s])+")
SHORTEST_PATTERN_MARKER = 3


def call_markers(render: Any) -> tuple[str, ...]:
    """The markers llama.cpp's render names besides the thinking tags: its tool-call grammar's trigger words, the
    first literal run of three characters or more in each trigger pattern (`>>>` of `>>>(?!all)`), its preserved
    tokens and additional stops."""
    found = [*render.preserved_tokens, *render.additional_stops]
    for trigger in render.grammar_triggers:
        value = str(trigger.get("value", ""))
        if trigger.get("type") == TRIGGER_WORD:
            found.append(value)
        else:
            runs = (re.sub(r"\\(.)", r"\1", run.group()) for run in LITERAL_RUN.finditer(value))
            found += [next((run for run in runs if len(run) >= SHORTEST_PATTERN_MARKER), "")]
    return tuple(dict.fromkeys(marker for marker in found if marker))


class RenderFailed(Exception):
    """llama.cpp refused to render the session (a template error)."""


class OracleFailed(Exception):
    """The oracle crashed, timed out or answered with an error on one request."""

    def __init__(self, outcome: Outcome, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


class OracleRefused(OracleFailed):
    """The oracle answered one request with an error (a template it cannot render, a read that ran out of
    memory): oracle_crashed for that request's rows."""


class OracleReads:
    """The oracle's answers for a sweep: looked up in the cache first, asked of llama.cpp on a miss."""

    def __init__(self, identity: OracleIdentity, cache: OracleCache | None, timeout: float = 30.0) -> None:
        self.identity = identity
        self.cache = cache
        self.timeout = timeout
        self.client: Any = None
        self.requests = 0

    def ask(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """One request to llama.cpp; crashes and timeouts become OracleFailed."""
        if self.client is None:
            self.client = Oracle(version=self.identity.version, timeout=self.timeout)
        self.requests += 1
        try:
            return getattr(self.client, op)(*args, **kwargs)
        except OracleTimeout as error:
            raise OracleFailed(Outcome.ORACLE_TIMEOUT, f"{op}: {error}") from error
        except OracleCrashed as error:
            raise OracleFailed(Outcome.ORACLE_CRASHED, f"{op}: {error}") from error
        except OracleError as error:
            raise OracleRefused(Outcome.ORACLE_CRASHED, f"{op}: {error}") from error

    def answer(self, parts: Sequence[Any], compute: Callable[[], Any]) -> Any:
        """The cached answer for `parts` (what it depends on besides the oracle), or compute and store it."""
        key = OracleCache.key(self.identity.build_id, self.identity.version, *parts)
        if self.cache is not None:
            found = self.cache.get(key)
            if found is not None:
                return found
        value = compute()
        if self.cache is not None:
            self.cache.put(key, value)
        return value

    def tokens(self, vocab: Vocab, text: str) -> TokenPieces:
        """A reply's token pieces in a vocab, from the cache or llama.cpp's tokenizer; an error answer or pieces
        that do not spell the text are OracleFailed (oracle_crashed) too."""

        def compute() -> dict[str, Any]:
            tokenization = self.ask("tokenize", vocab, text)
            return {"pieces": [piece.hex() for piece in tokenization.pieces], "special": tokenization.special}

        found = self.answer((TOKENIZE, vocab.key(), text), compute)
        try:
            return token_pieces(text, [bytes.fromhex(piece) for piece in found["pieces"]], found["special"])
        except ValueError as error:
            raise OracleFailed(Outcome.ORACLE_CRASHED, f"tokenize ({vocab.name}): {error}") from error

    def session(self, session: Session) -> OracleSession:
        """The oracle's view of one session."""
        return OracleSession(self, session)

    def flush(self) -> None:
        """Write the answers cached since the last flush (at the end of each session of a sweep)."""
        if self.cache is not None:
            self.cache.flush()

    def close(self) -> None:
        """Stop the oracle child and close the cache."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cache is not None:
            self.cache.close()


class OracleSession:
    """One session's renders and reads; the handle is obtained only when a read misses the cache."""

    def __init__(self, reads: OracleReads, session: Session) -> None:
        self.reads = reads
        self.request = session.render_request()
        self.request_key = OracleCache.key(canonical_json(self.request))
        self.handle: int | None = None
        self.streams: list[Streamed] = []
        self.kept: tuple[str, tuple[int, ...], frozenset[int]] = ("", (), frozenset())

    def cached(self, what: Sequence[Any], compute: Callable[[], Any]) -> Any:
        """The cached answer for `what` of this session, or compute and store it."""
        return self.reads.answer((self.request_key, *what), compute)

    def rendered(self) -> Any:
        """The client's Render of the session (a request), keeping its handle."""
        try:
            render = self.reads.ask("render", self.request)
        except OracleRefused as error:
            return {"error": str(error.__cause__)}
        self.handle = render.handle
        return render

    def render(self) -> RenderInfo:
        """The oracle's render; RenderFailed when llama.cpp refuses the template."""

        def compute() -> dict[str, Any]:
            render = self.rendered()
            if isinstance(render, dict):
                return render
            return {
                "format": str(render.format),
                "prompt": render.prompt,
                "generation_prompt": render.generation_prompt,
                "thinking_start_tag": render.thinking_start_tag or "",
                "thinking_end_tags": list(render.thinking_end_tags or []),
                "call_markers": list(call_markers(render)),
            }

        found = self.cached(("render", "call_markers"), compute)
        if "error" in found:
            raise RenderFailed(found["error"])
        return RenderInfo(
            found["format"],
            found["prompt"],
            found["generation_prompt"],
            found["thinking_start_tag"],
            tuple(found["thinking_end_tags"]),
            tuple(found["call_markers"]),
        )

    def ensure_handle(self) -> int:
        """The oracle's handle for this session, rendering it now if needed."""
        if self.handle is None:
            render = self.rendered()
            if isinstance(render, dict):
                raise RenderFailed(render["error"])
        assert self.handle is not None
        return self.handle

    def parse(self, text: str, partial: bool) -> Reading:
        """llama.cpp's whole read (a partial read for a partial reply)."""
        found = self.cached(
            ("parse", text, partial),
            lambda: reading_to_json(self.reads.ask("parse", self.ensure_handle(), text, partial=partial)),
        )
        return reading_from_json(found)

    def grammar(self, text: str, partial: bool) -> GrammarVerdict:
        """Whether a model sampling under llama-server's grammar for this request can write `text` (`Oracle.grammar`)."""
        found = self.cached(
            ("grammar", text, partial),
            lambda: self.reads.ask("grammar", self.ensure_handle(), text, partial=partial).text(),
        )
        return GrammarVerdict.of_text(found)

    def partials(self, text: str, ends: Sequence[int]) -> PartialReads:
        """llama.cpp's partial read of each prefix `text[:end]`, from one stream request (kept, in the cache
        and in the answer, as `partial_reads` writes them, with the cuts whose parse came back empty:
        `kept_at`)."""
        if not ends:
            return decoded_at((), ())
        record = self.cached(("partials", "kept", text, list(ends)), lambda: self.streamed(text, ends))
        try:
            reads = decoded_at(ends, record["reads"])
            self.kept = (text, tuple(ends), frozenset(ends[index] for index in record["kept"]))
        except (ValueError, KeyError, TypeError, IndexError) as error:
            raise OracleFailed(Outcome.ORACLE_CRASHED, f"stream: {error}") from error
        return reads

    def kept_at(self, text: str, ends: Sequence[int]) -> frozenset[int]:
        """The cuts of a stream of `text` at `ends` whose partial parse came back empty, so that llama-server kept
        the message before (read with the stream's partial reads)."""
        if self.kept[:2] != (text, tuple(ends)):
            self.partials(text, ends)
        return self.kept[2]

    def streamed(self, text: str, ends: Sequence[int]) -> dict[str, Any]:
        """llama.cpp's partial reads at `ends` as `partial_reads` writes them and the indices of the cuts whose
        parse came back empty, streamed on from an earlier stream of the session where it read the same first cuts
        (`stream_resume`), else streamed whole; kept for the streams after it (only those llama.cpp streamed: a
        warm sweep keeps none)."""

        def stream(cuts: Sequence[int]) -> Any:
            return self.reads.ask("stream", self.ensure_handle(), text, list(cuts))

        resume = resume_point(self.streams, text, ends)
        found = None
        if resume is not None:
            asked = stream(ends[resume.at:])
            if same(read_entry(None, asked.written[0]), resume.last):
                found = Streamed(text, tuple(ends), [*resume.written, *asked.written[1:]],
                                 (*resume.kept, *(resume.at + index for index in asked.kept if index)))
        if found is None:
            whole = stream(ends)
            found = Streamed(text, tuple(ends), whole.written, tuple(whole.kept))
        self.streams.append(found)
        return {"reads": found.written, "kept": list(found.kept)}
