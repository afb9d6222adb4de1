"""`--parser llama-server[:PATH]`: llama.cpp's own server as the parser under test, each reply written by a tape
model and read back over HTTP, plain and streamed."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from chatparity.model import (
    Message,
    NotWritten,
    ParserCrashed,
    ParserTimeout,
    ParserUnsupported,
    Reading,
    Rejection,
    Session,
    SessionReader,
    StreamRead,
)
from harness import server_client
from harness.chunkings import boundaries
from harness.server_client import HttpError, Merged
from harness.server_process import ServerFailed, ServerProcess, get_json
from harness.server_reads import chat_body, final_answer, own_ids, stream_snapshots, token_ends
from harness.server_tape import Placement, place, placeable
from harness.server_vocabs import TemplateVocab, template_vocab
from oracle.server_build import ensure_server, flags_key
from oracle.tape import CONTROL, ensure_tape
from templates.index import load_index
from templates.pins import pin_of, resolve_version

NAME = "llama-server"


@contextmanager
def restarting(process: ServerProcess, timeout: float) -> Iterator[None]:
    """A request that times out, or finds the server gone, as the row's ParserTimeout or ParserCrashed, the
    server restarted; a refused request (an HTTP error) as ParserCrashed."""
    try:
        yield
    except HttpError as error:
        raise ParserCrashed(f"llama-server refused the request: {error}") from error
    except TimeoutError as error:
        process.restart()
        raise ParserTimeout(f"llama-server did not answer within {timeout:g}s") from error
    except OSError as error:
        tail = process.tail(400)
        process.restart()
        raise ParserCrashed(f"llama-server lost ({error}); its log ends: {tail}") from error


class TemplateServer:
    """A llama-server with one template's tape and chat template; a request it does not answer in time, or
    that finds it dead, costs that row and restarts it."""

    def __init__(self, binary: Path, vocab: TemplateVocab, template: Path, log: Path, timeout: float) -> None:
        self.vocab = vocab
        self.timeout = timeout
        self.process = ServerProcess(binary, ensure_tape(vocab.tape), template, log)
        self.process.start()
        self.eog = vocab.tape.eog or str(get_json(self.process.port, "/props")["eos_token"])
        self.hidden = tuple(marker for marker, kind in vocab.tape.markers if kind == CONTROL)

    def guarded(self) -> AbstractContextManager[None]:
        """This server's requests, guarded by `restarting`."""
        return restarting(self.process, self.timeout)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """POST to the server."""
        return server_client.post(self.process.port, path, body, self.timeout)

    def stop(self) -> None:
        """Stop the server."""
        self.process.stop()


class ServerReader:
    """One session's replies as llama-server writes and reads them; each reply's requests are made once."""

    def __init__(self, server: TemplateServer, session: Session) -> None:
        self.server = server
        self.session = session
        self.finals: dict[tuple[str, bool], Reading | NotWritten] = {}
        self.streams: dict[tuple[str, bool], tuple[Merged, list[int]]] = {}
        self.placements: dict[str, Placement] = {}

    def close(self) -> None:
        """Nothing to release: the server belongs to the parser and serves the template's next session."""

    def placement(self, text: str) -> Placement:
        """The request that writes `text` (NotWritten when none can)."""
        if text not in self.placements:
            self.placements[text] = place(self.server.post, self.session, text, self.server.eog)
        return self.placements[text]

    def final(self, text: str, partial: bool) -> Reading:
        """The server's non-stream answer, checked to be its reading of `text` (NotWritten when it wrote
        something else)."""
        key = (text, partial)
        if key not in self.finals:
            try:
                with self.server.guarded():
                    self.server.process.trim_log()
                    offset = self.server.process.log_size()
                    self.finals[key] = final_answer(
                        self.server.post, lambda: self.server.process.log_since(offset), self.session,
                        self.placement(text), text, partial, self.server.hidden,
                    )
            except NotWritten as error:
                self.finals[key] = error
        found = self.finals[key]
        if isinstance(found, NotWritten):
            raise found
        return found

    def streamed(self, text: str, partial: bool) -> tuple[Merged, list[int]]:
        """The server's merged SSE stream of `text` and where each of its tokens ends."""
        self.final(text, partial)
        if (text, partial) not in self.streams:
            body = {**chat_body(self.placement(text), partial), "timings_per_token": True}
            with self.server.guarded():
                pieces = self.server.post(
                    "/tokenize", {"content": text, "add_special": False, "parse_special": True, "with_pieces": True}
                )["tokens"]
                merged = server_client.stream(self.server.process.port, body, self.server.timeout)
            self.streams[text, partial] = (merged, token_ends(text, [piece["piece"] for piece in pieces]))
        return self.streams[text, partial]

    def parse(self, text: str, partial: bool) -> Reading:
        """A finished reply: the server's final answer. A cut one: the last state of its stream, which reads
        the text as partial (its final answer reads the cut text as complete)."""
        if not partial:
            return self.final(text, False)
        merged, ends = self.streamed(text, True)
        return own_ids(stream_snapshots(merged, ends, [len(text)])[-1], text)

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """The client's merged state at each chunk end (chunk ends between the server's tokens show the state
        after the last whole token), and the stream's end: its final answer (the error event's message as a
        rejection), or for a cut reply its last state."""
        text = "".join(chunks)
        merged, ends = self.streamed(text, not finish)
        snapshots: list[Reading] = [own_ids(held, text) for held in stream_snapshots(merged, ends, boundaries(chunks))]
        if not finish:
            return StreamRead(snapshots, snapshots[-1] if snapshots else Message())
        final: Reading = Rejection(merged.error) if merged.error else own_ids(merged.message(), text)
        return StreamRead(snapshots, final)


class ServerParser:
    """llama-server built from the pinned source (or the user's binary at PATH), one server per template,
    one template's server alive at a time."""

    def __init__(self, binary: Path | None = None, timeout: float = 30.0, version: str | None = None) -> None:
        self.version = resolve_version(version)
        self.user_binary = binary
        self.timeout = timeout
        self.name = NAME if binary is None else f"{NAME}:{binary}"
        self.index = load_index()
        self.scratch = Path(tempfile.mkdtemp(prefix="chatparity-server-"))
        self.current: tuple[str, TemplateServer] | None = None

    def revision(self) -> str:
        """The pinned llama.cpp commit and build flags, or the user's binary's hash."""
        if self.user_binary is None:
            return f"{pin_of(self.version).llama_cpp_commit}+server-{flags_key()}"
        digest = hashlib.sha256(Path(self.user_binary).read_bytes()).hexdigest()[:16]
        return f"binary-{digest}"

    def binary(self) -> Path:
        """The server binary: the user's, or the pinned build (built on first use)."""
        return self.user_binary or ensure_server(self.version)

    def server_for(self, session: Session) -> TemplateServer:
        """The running server of the session's template, started (and the previous one stopped) when needed."""
        if self.current is not None and self.current[0] == session.template_sha256:
            return self.current[1]
        self.stop_current()
        entry = self.index.get(session.template)
        if entry is None:
            raise ParserUnsupported(f"{session.template} is not in the template index")
        template = self.scratch / f"{session.template_sha256}.jinja"
        template.write_text(session.template_source, encoding="utf-8")
        log = self.scratch / f"{session.template_sha256}.log"
        try:
            server = TemplateServer(self.binary(), template_vocab(entry), template, log, self.timeout)
        except ServerFailed as error:
            raise ParserCrashed(str(error)) from error
        self.current = (session.template_sha256, server)
        return server

    def open(self, session: Session) -> SessionReader:
        """A reader of the session on its template's server; a conversation the tape cannot end is
        unsupported."""
        reason = placeable(session)
        if reason:
            raise ParserUnsupported(f"the tape cannot be placed: {reason}")
        return ServerReader(self.server_for(session), session)

    def stop_current(self) -> None:
        """Stop the running server, if any."""
        if self.current is not None:
            self.current[1].stop()
            self.current = None

    def close(self) -> None:
        """Stop the server and remove the scratch directory."""
        self.stop_current()
        shutil.rmtree(self.scratch, ignore_errors=True)
