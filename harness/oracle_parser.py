"""`--parser oracle[:VERSION]`: llama.cpp as the parser under test, read through the sweep's cached oracle."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from chatparity.model import (
    Outcome,
    ParserCrashed,
    ParserRenderFailed,
    ParserTimeout,
    Reading,
    Session,
    SessionReader,
    StreamRead,
)
from harness.chunkings import boundaries
from harness.oracle_reads import OracleFailed, OracleIdentity, OracleReads, OracleSession, RenderFailed
from harness.server_view import server_final


@contextmanager
def oracle_failures() -> Iterator[None]:
    """The oracle's crash and timeout as the parser's."""
    try:
        yield
    except OracleFailed as error:
        if error.outcome is Outcome.ORACLE_TIMEOUT:
            raise ParserTimeout(str(error)) from error
        raise ParserCrashed(str(error)) from error


class OracleReader:
    """llama.cpp reading the replies of one session as the parser under test."""

    def __init__(self, session: OracleSession) -> None:
        self.session = session

    def parse(self, text: str, partial: bool) -> Reading:
        """llama.cpp's whole read."""
        with oracle_failures():
            return self.session.parse(text, partial)

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """llama.cpp's partial read at each chunk end, as llama-server streams; at the end its finished read, or
        the last message it showed when that read is empty, as llama-server's stream ends."""
        text = "".join(chunks)
        ends = boundaries(chunks)
        with oracle_failures():
            snapshots = self.session.partials(text, ends).reads
            last = snapshots.last
            final = server_final(snapshots, self.session.parse(text, False), False) if finish else last
            assert final is not None
            return StreamRead(snapshots, final)

    def close(self) -> None:
        """Nothing to send: the oracle keeps its renders for the sweep's own reads."""


class OracleParser:
    """`oracle` or `oracle:VERSION`: llama.cpp in its own child process, its answers cached like the sweep's."""

    def __init__(self, reads: OracleReads) -> None:
        self.reads = reads
        self.name = f"oracle:{reads.identity.version}"

    def revision(self) -> str:
        """The llama.cpp commit and oracle build id, known without starting the child."""
        identity: OracleIdentity = self.reads.identity
        return f"{identity.llama_cpp_commit}+{identity.build_id}"

    def open(self, session: Session) -> SessionReader:
        """Render the session; a template llama.cpp cannot render is unsupported."""
        oracle = self.reads.session(session)
        try:
            with oracle_failures():
                oracle.render()
        except RenderFailed as error:
            raise ParserRenderFailed(f"llama.cpp cannot render the session: {error}") from error
        return OracleReader(oracle)

    def close(self) -> None:
        """Stop the child process and close the cache."""
        self.reads.close()
