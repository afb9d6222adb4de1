"""The oracle's side of a sweep: renders, whole reads and partial reads, from the disk cache or llama.cpp."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatparity.model import Outcome, Reading, Session, canonical_json, reading_from_json, reading_to_json
from harness.chunkings import TokenPieces, token_pieces
from harness.oracle_cache import OracleCache
from harness.stream_resume import Streamed, resume_point
from oracle.build import source_hash
from oracle.client import Oracle, OracleCrashed, OracleError, OracleTimeout
from oracle.partial_reads import decoded_at, encoded, read_entry, same
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

    def tokens(self, vocab: Vocab, text: str) -> TokenPieces:
        """A reply's token pieces in a vocab, from the cache or llama.cpp's tokenizer; an error answer or pieces
        that do not spell the text are OracleFailed (oracle_crashed) too."""
        key = OracleCache.key(self.identity.build_id, self.identity.version, "tokenize", vocab.key(), text)
        found = self.cache.get(key) if self.cache is not None else None
        if found is None:
            tokenization = self.ask("tokenize", vocab, text)
            found = {
                "pieces": [piece.hex() for piece in tokenization.pieces],
                "special": tokenization.special,
            }
            if self.cache is not None:
                self.cache.put(key, found)
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

    def key(self, what: Sequence[Any]) -> str:
        """The cache key of this session's answer for `what`."""
        return OracleCache.key(self.reads.identity.build_id, self.reads.identity.version, self.request_key, *what)

    def cached(self, what: Sequence[Any], compute: Any) -> Any:
        """The cached answer for `what`, or compute and store it."""
        cache = self.reads.cache
        key = self.key(what)
        if cache is not None:
            found = cache.get(key)
            if found is not None:
                return found
        value = compute()
        if cache is not None:
            cache.put(key, value)
        return value

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
            }

        found = self.cached(("render",), compute)
        if "error" in found:
            raise RenderFailed(found["error"])
        return RenderInfo(
            found["format"],
            found["prompt"],
            found["generation_prompt"],
            found["thinking_start_tag"],
            tuple(found["thinking_end_tags"]),
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

    def partials(self, text: str, ends: Sequence[int]) -> dict[int, Reading]:
        """llama.cpp's partial read of each prefix `text[:end]`, from one stream request (kept in the cache as
        `partial_reads` writes them)."""
        if not ends:
            return {}

        written = self.cached(("partials", text, list(ends)), lambda: self.streamed(text, ends))
        try:
            return decoded_at(ends, written)
        except ValueError as error:
            raise OracleFailed(Outcome.ORACLE_CRASHED, f"stream: {error}") from error

    def streamed(self, text: str, ends: Sequence[int]) -> list[Any]:
        """llama.cpp's partial reads at `ends` as `partial_reads` writes them, streamed on from an earlier stream
        of the session where it read the same first cuts (`stream_resume`), else streamed whole; kept for the
        streams after it (only those llama.cpp streamed: a warm sweep keeps none)."""

        def stream(cuts: Sequence[int]) -> list[Any]:
            return self.reads.ask("stream", self.ensure_handle(), text, list(cuts)).written

        resume = resume_point(self.streams, text, ends)
        written = None
        if resume is not None:
            asked = stream(ends[resume.at:])
            if same(read_entry(None, asked[0]), resume.last):
                written = [*resume.written, *asked[1:]]
        if written is None:
            written = stream(ends)
        self.streams.append(Streamed(text, tuple(ends), written))
        return written

    def prefix_reads(self, text: str) -> PrefixReads:
        """llama.cpp's partial reads of prefixes of `text`, each read on its own (`PrefixReads`)."""
        return PrefixReads(self, text)


class PrefixReads:
    """llama.cpp's partial reads of prefixes of one reply, each read on its own: the ones the cache holds for
    the reply are loaded together at the first read asked, the others read as needed (`OracleSession.parse`),
    and all of them kept in the cache together (`save`), so a reply costs one cache read however many of its
    prefixes are read."""

    def __init__(self, session: OracleSession, text: str) -> None:
        self.session = session
        self.text = text
        self.key = session.key(("prefix reads", text))
        self.reads: dict[int, Reading] | None = None
        self.asked = False

    def loaded(self) -> dict[int, Reading]:
        """The reads the cache holds (none without a cache), loaded once."""
        if self.reads is None:
            cache = self.session.reads.cache
            found = cache.get(self.key) if cache is not None else None
            self.reads = {} if found is None else decoded_at(found["ends"], found["reads"])
        return self.reads

    def __call__(self, end: int) -> Reading:
        """llama.cpp's partial read of `text[:end]` on its own."""
        reads = self.loaded()
        found = reads.get(end)
        if found is None:
            found = reads[end] = self.session.parse(self.text[:end], True)
            self.asked = True
        return found

    def save(self) -> None:
        """Keep the reads of this reply in the cache together, when any was not there."""
        cache = self.session.reads.cache
        if self.asked and cache is not None and self.reads is not None:
            ends = sorted(self.reads)
            cache.put(self.key, {"ends": ends, "reads": encoded([self.reads[end] for end in ends])})
            self.asked = False
