"""The Python client of the llama.cpp oracle: one child process speaking JSON lines, restarted on crash or timeout."""

from __future__ import annotations

import collections
import fcntl
import itertools
import json
import os
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from chatparity.model import Message, Reading, Rejection
from oracle.build import ensure_binary, vocab_path
from oracle.partial_reads import decoded
from oracle.vocabs import Vocab
from templates.pins import resolve_version

STDERR_TAIL_LINES = 20
BINARY_ENV = "CHATPARITY_ORACLE_BINARY"
CHILD_HANDLES_KEPT = 2048
STARTUP_POLL = 0.01
"""Seconds between looks at whether a process that has just started reads its first request."""


class OracleError(RuntimeError):
    """The oracle answered a request with an error (a malformed request, a template that fails to render)."""


class OracleCrashed(OracleError):
    """The oracle process died during a request; the next request starts a new one."""


class OracleTimeout(OracleError):
    """A request took longer than the timeout; the process was killed and the next request starts a new one."""


@dataclass(frozen=True)
class Render:
    """What llama.cpp makes of a session: the prompt, its chat format and parser, and a handle to read replies."""

    prompt: str
    format: str
    generation_prompt: str
    supports_thinking: bool
    thinking_start_tag: str
    thinking_end_tags: list[str]
    grammar: str
    grammar_lazy: bool
    grammar_triggers: list[dict[str, Any]]
    preserved_tokens: list[str]
    additional_stops: list[str]
    handle: int


@dataclass(frozen=True)
class StreamReading:
    """A reply read as llama-server streams it: a partial read and its diffs per boundary, then the finished read.

    As task_result_state::update_chat_msg: a prefix that reads as an empty message keeps the previous snapshot
    (with no diffs); tool-call ids are the parser's own (llama-server would fill empty ones with random ids).
    A prefix whose partial read throws is a Rejection at that boundary (llama-server would end the stream).
    The partial reads come as `partial_reads` writes them (`written`: each against the read before, so a stream
    of n boundaries takes about as much memory as its reply, not n readings whole); `partials` reads them all.
    A diff is {"reasoning_content_delta", "content_delta", "tool_call_index" (None when not a call),
    "tool_call_delta": {"name", "arguments", "id"}}. A diff error is what compute_diffs threw at that step
    (llama-server would end the stream there), '' when none. `kept` holds the steps whose partial parse came back
    empty, so that llama-server kept the message before it.
    """

    written: list[Any]
    diffs: list[list[dict[str, Any]]]
    final: Reading
    final_diffs: list[dict[str, Any]] = field(default_factory=list)
    diff_errors: list[str] = field(default_factory=list)
    final_diff_error: str = ""
    kept: list[int] = field(default_factory=list)

    @property
    def partials(self) -> list[Reading]:
        """Every partial read, whole."""
        return decoded(self.written)


GRAMMAR_VERDICTS = ("free", "untriggered", "accepts", "rejects", "incomplete", "prompt", "invalid")
WRITABLE = ("free", "untriggered", "accepts")


@dataclass(frozen=True)
class Timing:
    """llama.cpp's CPU seconds for one reply: its whole read, and the llama-server loop over the reply's chunks."""

    whole: float
    stream: float


@dataclass(frozen=True)
class GrammarVerdict:
    """Whether a model sampling under the grammar llama-server builds for a request can write a text: `verdict` is
    one of GRAMMAR_VERDICTS (`free`: the request has no grammar; `untriggered`: a lazy grammar the text never
    triggers; `accepts`; `rejects` at code point `at`; `incomplete`: a finished text the grammar cannot end;
    `prompt`: the grammar rejects the generation prompt; `invalid`: the grammar does not parse), and `start`, the
    code point the grammar constrains the text from (0 for an eager grammar, fed the generation prompt first)."""

    verdict: str
    at: int | None = None
    start: int | None = None

    @property
    def writable(self) -> bool:
        """Whether the model can write the text."""
        return self.verdict in WRITABLE

    def text(self) -> str:
        """The verdict as the store keeps it: `rejects @12 from 0`, `accepts from 5`, `untriggered`."""
        at = "" if self.at is None else f" @{self.at}"
        start = "" if self.start is None else f" from {self.start}"
        return f"{self.verdict}{at}{start}"

    @classmethod
    def of_text(cls, text: str) -> GrammarVerdict:
        """The verdict `text` wrote."""
        head, _, start = text.partition(" from ")
        verdict, _, at = head.partition(" @")
        return cls(verdict, int(at) if at else None, int(start) if start else None)


@dataclass(frozen=True)
class Tokenization:
    """A text as llama.cpp tokenizes it (special tokens parsed whole, nothing added): each token's id, the bytes
    token_to_piece renders for it, and whether it is a special token (control, user-defined or unknown)."""

    tokens: list[int]
    pieces: list[bytes]
    special: list[bool]


def reading_of(data: dict[str, Any]) -> Reading:
    """A reading from the oracle's JSON: a message, or a rejection."""
    if "rejected" in data:
        return Rejection(data["rejected"])
    return Message.from_json(data)


def signal_name(number: int) -> str:
    """A signal's name (SIGABRT), or its number when unknown."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def write_within(fd: int, data: bytes, deadline: float) -> bool:
    """Write all of `data` to a non-blocking pipe before the monotonic `deadline`; False when time ran out.

    OSError (a closed pipe) propagates."""
    view = memoryview(data)
    while view:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        _, ready, _ = select.select([], [fd], [], remaining)
        if not ready:
            continue
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            continue
    return True


def queued(fd: int) -> int:
    """The bytes written to a pipe that its reader has not read yet (0 where the system does not tell)."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


def first_read(fd: int, data: bytes, limit: float, running: Callable[[], bool]) -> bytes | None:
    """Write what a non-blocking pipe takes of `data`, the first request to a process that has just started, and
    wait until the monotonic `limit` for the process to start reading it: its start-up, which no request's
    timeout counts. What is left of `data` to write (also when the process ended meanwhile, which the answer
    shows), or None when it never started reading."""
    try:
        data = data[os.write(fd, data) :]
    except BlockingIOError:
        pass
    pending = queued(fd)
    while pending and queued(fd) >= pending and running():
        if time.monotonic() > limit:
            return None
        time.sleep(STARTUP_POLL)
    return data


def end_group(process: subprocess.Popen[bytes]) -> None:
    """Kill a child started in a process group of its own, with whatever that group holds, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def byte_offsets(text: str, boundaries: list[int]) -> list[int]:
    """Code-point offsets into `text` as UTF-8 byte offsets (which never fall inside a sequence)."""
    previous = -1
    for boundary in boundaries:
        if not 0 <= boundary <= len(text):
            raise ValueError(f"boundary {boundary} is outside the text (0..{len(text)} code points)")
        if boundary <= previous:
            raise ValueError(f"boundaries must increase: {boundary} after {previous}")
        previous = boundary
    if text.isascii():
        return list(boundaries)
    prefix = [0, *itertools.accumulate(len(ch.encode("utf-8", "surrogatepass")) for ch in text)]
    return [prefix[boundary] for boundary in boundaries]


class Oracle:
    """llama.cpp's chat code in a child process, started on first use and restarted after a crash or timeout."""

    def __init__(self, version: str | None = None, timeout: float = 30.0, binary: Path | None = None) -> None:
        """A client for the oracle of a llama-cpp-python version (built on first use unless `binary` is given)."""
        self.version = resolve_version(version)
        self.timeout = timeout
        self._binary = binary
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._ids = itertools.count(1)
        self._handles = itertools.count(1)
        self._render_requests: dict[int, dict[str, Any]] = {}
        self._child_handles: dict[int, int] = {}
        self._stderr_thread: threading.Thread | None = None
        self._starting = False
        self._lock = threading.RLock()

    def __enter__(self) -> Self:
        """The client itself; the child is closed on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the child."""
        self.close()

    @property
    def pid(self) -> int | None:
        """The process id of the running child, None when none runs."""
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    def info(self) -> dict[str, Any]:
        """The llama.cpp commit, llama-cpp-python version, sdist sha256 and oracle build id of the child."""
        response = self.request({"op": "info"})
        return {key: value for key, value in response.items() if key != "id"}

    def render(self, request: dict[str, Any]) -> Render:
        """Render a session (the fields of Session.render_request()); raises OracleError if the template fails.
        A child holding CHILD_HANDLES_KEPT handles (llama.cpp keeps every one) is replaced first, so its memory
        stays bounded; a handle it held is rendered again in the new child when next used."""
        with self._lock:
            if len(self._child_handles) >= CHILD_HANDLES_KEPT:
                self._kill()
            response = self.request({**request, "op": "render"})
            with self._malformed("render", response):
                fields = {name: response[name] for name in Render.__dataclass_fields__ if name != "handle"}
                child_handle = response["handle"]
            handle = next(self._handles)
            self._render_requests[handle] = dict(request)
            self._child_handles[handle] = child_handle
        return Render(**fields, handle=handle)

    def parse(self, handle: int, text: str, partial: bool = False) -> Reading:
        """Read a reply (finished, or cut when `partial`): a Message, or a Rejection when llama.cpp throws."""
        response = self._handle_request(handle, {"op": "parse", "text": text, "is_partial": partial})
        with self._malformed("parse", response):
            return reading_of(response["reading"])

    def stream(self, handle: int, text: str, boundaries: list[int]) -> StreamReading:
        """Read a reply as llama-server streams it, cut at increasing code-point offsets, then finished."""
        offsets = byte_offsets(text, boundaries)
        response = self._handle_request(handle, {"op": "stream", "text": text, "boundaries": offsets})
        with self._malformed("stream", response):
            steps, final = response["steps"], response["final"]
            if len(steps) != len(boundaries):
                raise ValueError(f"{len(steps)} steps for {len(boundaries)} boundaries")
            return StreamReading(
                written=[step["read"] for step in steps],
                diffs=[step["diffs"] for step in steps],
                final=reading_of(final["reading"]),
                final_diffs=final["diffs"],
                diff_errors=[step["diff_error"] for step in steps],
                final_diff_error=final["diff_error"],
                kept=[index for index, step in enumerate(steps) if step.get("kept")],
            )

    def time(self, handle: int, text: str, boundaries: list[int], repeat: int = 1) -> Timing:
        """llama.cpp's own CPU time for a reply, the fastest of `repeat` runs: read whole, and served as a stream
        cut at increasing code-point offsets (llama-server's partial parse and diffs after each chunk)."""
        offsets = byte_offsets(text, boundaries)
        request = {"op": "time", "text": text, "boundaries": offsets, "repeat": repeat}
        response = self._handle_request(handle, request)
        with self._malformed("time", response):
            return Timing(int(response["whole_ns"]) / 1e9, int(response["stream_ns"]) / 1e9)

    def grammar(self, handle: int, text: str, partial: bool = False) -> GrammarVerdict:
        """Whether a model sampling under llama-server's grammar for the handle's request can write `text` (a cut
        text: its start), as common_sampler drives the grammar (lazy triggers, thoughts left free)."""
        response = self._handle_request(handle, {"op": "grammar", "text": text, "is_partial": partial})
        with self._malformed("grammar", response):
            found = response["grammar"]
            if found["verdict"] not in GRAMMAR_VERDICTS:
                raise ValueError(f"unknown grammar verdict {found['verdict']!r}")
            at, start = found["at"], found["from"]
            return GrammarVerdict(found["verdict"], None if at is None else int(at),
                                  None if start is None else int(start))

    def tokenize(self, vocab: Vocab, text: str) -> Tokenization:
        """llama.cpp's tokens of `text` in a vocab (its GGUF loaded once per child)."""
        response = self.request({"op": "tokenize", **self._vocab_fields(vocab), "text": text})
        with self._malformed("tokenize", response):
            tokens, pieces, special = response["tokens"], response["pieces"], response["special"]
            if not len(tokens) == len(pieces) == len(special):
                raise ValueError(f"{len(tokens)} tokens, {len(pieces)} pieces, {len(special)} special flags")
            return Tokenization(
                [int(token) for token in tokens],
                [bytes.fromhex(piece) for piece in pieces],
                [bool(flag) for flag in special],
            )

    def detokenize(self, vocab: Vocab, tokens: list[int]) -> str:
        """llama.cpp's text of token ids in a vocab, special tokens rendered."""
        response = self.request({"op": "detokenize", **self._vocab_fields(vocab), "tokens": tokens})
        with self._malformed("detokenize", response):
            text = response["text"]
            if not isinstance(text, str):
                raise TypeError(f"text is {type(text).__name__}")
            return text

    def _vocab_fields(self, vocab: Vocab) -> dict[str, Any]:
        """The request fields naming a vocab: the shipped GGUF's path and the tokens added to it."""
        return {"vocab_path": str(vocab_path(vocab.file, self.version)), "added": list(vocab.added)}

    @contextmanager
    def _malformed(self, op: str, response: dict[str, Any]) -> Iterator[None]:
        """An answer missing its fields as OracleCrashed (the child is restarted for the next request)."""
        try:
            yield
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            with self._lock:
                self._kill()
            raise OracleCrashed(
                f"oracle answered {op!r} with a malformed response ({type(error).__name__}: {error}): "
                f"{json.dumps(response)[:200]}"
            ) from None

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one raw protocol request and return its response; raises OracleError on an error response."""
        with self._lock:
            response = self._exchange(payload)
        if "error" in response:
            raise OracleError(f"oracle {payload.get('op')!r} failed: {response['error']}")
        return response

    def close(self) -> None:
        """Stop the child (it is started again by the next request)."""
        with self._lock:
            process, self._process = self._process, None
            self._child_handles.clear()
            if process is None:
                return
            if process.stdin is not None:
                try:
                    process.stdin.close()
                except OSError:
                    pass
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            end_group(process)
            if process.stdout is not None:
                process.stdout.close()

    def _handle_request(self, handle: int, payload: dict[str, Any]) -> dict[str, Any]:
        """A request on a render handle, rendering it again first when the child was restarted."""
        with self._lock:
            if handle not in self._render_requests:
                raise OracleError(f"unknown oracle handle {handle}")
            self._ensure_child()
            if handle not in self._child_handles:
                rendered = self.request({**self._render_requests[handle], "op": "render"})
                with self._malformed("render", rendered):
                    self._child_handles[handle] = rendered["handle"]
            return self.request({**payload, "handle": self._child_handles[handle]})

    def _ensure_child(self) -> subprocess.Popen[bytes]:
        """The running child, started when there is none."""
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._kill()
        binary = self._binary or os.environ.get(BINARY_ENV) or ensure_binary(self.version)
        env = {**os.environ, "TZ": "UTC"}
        process = subprocess.Popen(
            [str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True,
        )
        assert process.stdin is not None
        os.set_blocking(process.stdin.fileno(), False)
        self._stderr_tail.clear()
        self._stderr_thread = threading.Thread(target=self._drain_stderr, args=(process,), daemon=True)
        self._stderr_thread.start()
        self._process = process
        self._starting = True
        self._buffer = b""
        self._child_handles.clear()
        return process

    def _drain_stderr(self, process: subprocess.Popen[bytes]) -> None:
        """Keep the last lines the child wrote to stderr (for crash messages) without ever blocking it."""
        assert process.stderr is not None
        with process.stderr:
            for line in process.stderr:
                self._stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    def _kill(self) -> None:
        """Kill the child's process group (a wrapper's children too), if any, and forget its handles."""
        process, self._process = self._process, None
        self._child_handles.clear()
        if process is not None:
            end_group(process)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass

    def _exchange(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Write one request line, read its response line (within the timeout)."""
        process = self._ensure_child()
        request_id = next(self._ids)
        op = payload.get("op")
        line = json.dumps({**payload, "id": request_id}, ensure_ascii=False).encode("utf-8", "surrogatepass")
        assert process.stdin is not None and process.stdout is not None
        data, fd = line + b"\n", process.stdin.fileno()
        try:
            if self._starting:
                rest = first_read(fd, data, time.monotonic() + self.timeout, lambda: process.poll() is None)
                if rest is None:
                    self._kill()
                    raise OracleTimeout(f"oracle did not start reading its {op!r} request within "
                                        f"{self.timeout:g}s; the oracle was restarted")
                data, self._starting = rest, False
            deadline = time.monotonic() + self.timeout
            written = write_within(fd, data, deadline)
        except OSError:
            raise self._crashed(op) from None
        if not written:
            self._kill()
            raise OracleTimeout(f"oracle {op!r} request took over {self.timeout:g}s; the oracle was restarted")
        response_line = self._read_line(process, op, deadline)
        try:
            response = json.loads(response_line)
        except ValueError:
            self._kill()
            raise OracleCrashed(
                f"oracle answered {op!r} with a line that is not JSON: {response_line[:200]!r}"
            ) from None
        if not isinstance(response, dict) or response.get("id") != request_id:
            self._kill()
            got = response.get("id") if isinstance(response, dict) else response
            raise OracleCrashed(f"oracle answered request {request_id} ({op!r}) with the id {got!r}")
        return response

    def _read_line(self, process: subprocess.Popen[bytes], op: Any, deadline: float) -> bytes:
        """The next line the child writes before the deadline, or OracleTimeout / OracleCrashed (a long line is
        gathered in pieces, each searched once for its end)."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        pieces = [self._buffer]
        end = self._buffer.find(b"\n")
        while end < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                raise OracleTimeout(f"oracle {op!r} request took over {self.timeout:g}s; the oracle was restarted")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._crashed(op)
            pieces.append(chunk)
            found = chunk.find(b"\n")
            if found >= 0:
                end = sum(map(len, pieces)) - len(chunk) + found
        data = b"".join(pieces)
        line, self._buffer = data[:end], data[end + 1 :]
        return line

    def _crashed(self, op: Any) -> OracleCrashed:
        """Reap the dead child and describe how it died."""
        process = self._process
        code = None
        if process is not None:
            try:
                code = process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=1)
        if code is None:
            how = "closed its output (killed)"
        elif code < 0:
            how = f"killed by {signal_name(-code)}"
        else:
            how = f"exited with status {code}"
        tail = " | ".join(list(self._stderr_tail)[-5:])
        return OracleCrashed(f"oracle {how} during {op!r}" + (f"; stderr: {tail}" if tail else ""))
