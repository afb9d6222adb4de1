"""`--parser 'cmd:COMMAND ARGS'`: a parser in any language, driven over JSON lines on its stdin and stdout."""

from __future__ import annotations

import json
import os
import queue
import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

from chatparity.model import (
    ParserCrashed,
    ParserTimeout,
    ParserUnsupported,
    Reading,
    Session,
    SessionReader,
    StreamRead,
    reading_from_json,
)
from harness.stderr_log import StderrLog
from harness.stream_deltas import MergedDeltas, agreeing
from oracle.client import end_group, first_read, write_within


def session_json(session: Session) -> dict[str, Any]:
    """The `open` request's session object."""
    return {
        "template": session.template,
        "template_source": session.template_source,
        "bos": session.bos,
        "eos": session.eos,
        "messages": list(session.messages),
        "tools": session.tools,
        "tool_choice": session.tool_choice,
        "parallel_tool_calls": session.parallel_tool_calls,
        "enable_thinking": session.enable_thinking,
        "chat_template_kwargs": session.chat_template_kwargs,
        "reasoning_format": session.reasoning_format,
        "prompt": session.prompt,
        "now": session.now,
    }


def answer_reading(data: Any, what: str) -> Reading:
    """A reading from a response field, or ParserCrashed naming what was malformed."""
    if not isinstance(data, dict):
        raise ParserCrashed(f"malformed {what}: expected an object, got {json.dumps(data)[:200]}")
    try:
        return reading_from_json(data)
    except (AttributeError, TypeError, KeyError) as error:
        raise ParserCrashed(f"malformed {what}: {error}: {json.dumps(data)[:200]}") from error


ANSWER_LIMIT = 16 << 20
"""The bytes an answer line may take: a longer one makes its call parser_crashed (and restarts the program),
so a parser cannot drive the harness's memory or reports without bound."""
OVERSIZE = b""
"""What the pump queues for an answer line past ANSWER_LIMIT (a line read is never empty)."""


class Program:
    """The parser's process: a JSON line in, a JSON line out; restarted after a failure. It runs in a process
    group of its own, ended whole when the program stops (whatever children it left holding its output); its
    stderr goes to `log` when given (else to this process's stderr). A request's timeout counts from when the
    program reads it, so a program's start-up (bounded by a timeout of its own) counts against no request.
    `closes` turns false once the program shows it does not know `close`."""

    def __init__(self, command: str, timeout: float, log: StderrLog | None = None) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("parser spec 'cmd:': no command given")
        self.timeout = timeout
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.generation = 0
        self.next_id = 0
        self.starting = False
        self.closes = True

    def start(self) -> None:
        """Start the process and a thread reading its stdout lines into a queue."""
        stderr = subprocess.PIPE if self.log is not None else None
        try:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                            start_new_session=True)
        except OSError as error:
            raise ValueError(f"parser command {shlex.join(self.argv)!r} cannot start: {error}") from error
        assert self.process.stdin is not None
        os.set_blocking(self.process.stdin.fileno(), False)
        if self.log is not None:
            assert self.process.stderr is not None
            self.log.drain(self.process.stderr)
        self.lines = queue.Queue()
        self.generation += 1
        self.starting = True
        threading.Thread(target=self.pump, args=(self.process, self.lines), daemon=True).start()

    @staticmethod
    def pump(process: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        """Copy the process's stdout lines to the queue, then None at end of file (OVERSIZE, and no more, for a
        line past ANSWER_LIMIT); the pipe is closed here, by its only reader."""
        assert process.stdout is not None
        with process.stdout:
            for line in iter(lambda: process.stdout.readline(ANSWER_LIMIT + 1), b""):  # type: ignore[union-attr]
                if len(line) > ANSWER_LIMIT and not line.endswith(b"\n"):
                    lines.put(OVERSIZE)
                    return
                lines.put(line)
        lines.put(None)

    def stop(self) -> None:
        """End the program's process group (the next request starts a new one)."""
        process, self.process = self.process, None
        if process is None:
            return
        end_group(process)
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass

    def answer(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return its answer as written, an error answer too (the program started first
        if it is not running); ParserCrashed/ParserTimeout when no answer comes back."""
        if self.process is None or self.process.poll() is not None:
            self.stop()
            self.start()
        return self.exchange(op, fields)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return its response; ParserCrashed for an error answer, ParserCrashed or
        ParserTimeout when none comes back."""
        response = self.answer(op, **fields)
        if "error" in response:
            raise ParserCrashed(f"{op}: {response['error']}")
        return response

    def exchange(self, op: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Write one request line and read its answer line, within the timeout; ParserCrashed/ParserTimeout
        (and the program stopped) when none comes back whole."""
        process = self.process
        assert process is not None and process.stdin is not None
        self.next_id += 1
        line = json.dumps({"id": self.next_id, "op": op, **fields}, ensure_ascii=False)
        data = line.encode("utf-8") + b"\n"
        fd = process.stdin.fileno()
        try:
            if self.starting:
                rest = first_read(fd, data, time.monotonic() + self.timeout, lambda: process.poll() is None)
                if rest is None:
                    self.stop()
                    raise ParserTimeout(f"{op}: the parser did not start reading its stdin within {self.timeout:g}s")
                data, self.starting = rest, False
            deadline = time.monotonic() + self.timeout
            if not write_within(fd, data, deadline):
                raise queue.Empty
            answer = self.lines.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            self.stop()
            raise ParserTimeout(f"{op}: no answer within {self.timeout:g}s") from None
        except OSError as error:
            self.stop()
            raise ParserCrashed(f"{op}: cannot write to the parser: {error}") from error
        if answer is None:
            try:
                how = f"exited with status {process.wait(timeout=min(1.0, self.timeout))}"
            except subprocess.TimeoutExpired:
                how = "closed its stdout (killed)"
            self.stop()
            raise ParserCrashed(f"{op}: the parser {how}")
        if answer is OVERSIZE:
            self.stop()
            raise ParserCrashed(f"{op}: answer over {ANSWER_LIMIT} bytes (the limit of an answer line)")
        try:
            response = json.loads(answer)
        except ValueError:
            self.stop()
            raise ParserCrashed(
                f"{op}: answer is not JSON: {answer[:200]!r} (stdout carries only answers; write logs to stderr)"
            ) from None
        if not isinstance(response, dict) or response.get("id") != self.next_id:
            self.stop()
            raise ParserCrashed(f"{op}: answer without the request's id {self.next_id}: {answer[:200]!r}")
        return response


class CommandReader:
    """A reader the program opened; reopened transparently after the program restarts."""

    def __init__(self, program: Program, session: dict[str, Any]) -> None:
        self.program = program
        self.session = session
        self.generation = -1
        self.reader: Any = None

    def handle(self) -> Any:
        """The program's name for this reader, opening it if the process is new."""
        if self.generation != self.program.generation or self.program.process is None:
            response = self.program.request("open", session=self.session)
            if "unsupported" in response:
                raise ParserUnsupported(str(response["unsupported"]))
            if "reader" not in response:
                raise ParserCrashed(f"open: answer has neither 'reader' nor 'unsupported': {response}")
            self.reader, self.generation = response["reader"], self.program.generation
        return self.reader

    def parse(self, text: str, partial: bool) -> Reading:
        """The program's whole read."""
        response = self.program.request("parse", reader=self.handle(), text=text, partial=partial)
        return answer_reading(response.get("reading"), "parse reading")

    def stream(self, chunks: Sequence[str], finish: bool) -> StreamRead:
        """All chunks of one stream in one request, all snapshots in one response: as `snapshots`, as `deltas`
        (merged here), or both, which must agree."""
        response = self.program.request("stream", reader=self.handle(), chunks=list(chunks), finish=finish)
        raw, deltas = response.get("snapshots"), response.get("deltas")
        if raw is None and deltas is None:
            raise ParserCrashed(f"stream: expected {len(chunks)} snapshots or deltas, got neither")
        for name, given in (("snapshots", raw), ("deltas", deltas)):
            if given is not None and (not isinstance(given, list) or len(given) != len(chunks)):
                raise ParserCrashed(f"stream: expected {len(chunks)} {name}, got {json.dumps(given)[:200]}")
        if raw is None:
            assert deltas is not None
            merged = MergedDeltas(deltas)
            final = answer_reading(response.get("final"), "final reading") if finish else merged.last
            return StreamRead(merged, final)
        snapshots = tuple(answer_reading(item, f"snapshot {index}") for index, item in enumerate(raw))
        if deltas is not None:
            agreeing(snapshots, MergedDeltas(deltas))
        final = answer_reading(response.get("final"), "final reading") if finish else snapshots[-1]
        return StreamRead(snapshots, final)

    def close(self) -> None:
        """Send `close` for the reader if the program that opened it still runs; a program that answers it
        with an error or `unsupported`, or not at all, is sent no more (a parser older than `close` works)."""
        program = self.program
        if not program.closes or self.generation != program.generation or program.process is None:
            return
        try:
            response = program.request("close", reader=self.reader)
        except (ParserCrashed, ParserTimeout):
            program.closes = False
            return
        if "unsupported" in response:
            program.closes = False


class CommandParser:
    """A parser program started once per worker and spoken to in JSON lines."""

    def __init__(self, command: str, timeout: float, log: StderrLog | None = None) -> None:
        self.command = command
        self.program = Program(command, timeout, log)
        self.answered: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        """The program's answer to `info`, asked once ({} when it gives none)."""
        if self.answered is None:
            try:
                self.answered = self.program.request("info")
            except (ParserCrashed, ParserTimeout):
                self.answered = {}
        return self.answered

    @property
    def name(self) -> str:
        """The name the program reports to `info`, else `cmd:COMMAND`."""
        return str(self.info().get("name") or f"cmd:{self.command}")

    def revision(self) -> str:
        """The revision the program reports to `info` ('' if it reports none)."""
        return str(self.info().get("revision", ""))

    def open(self, session: Session) -> SessionReader:
        """Open a reader for the session in the program."""
        reader = CommandReader(self.program, session_json(session))
        reader.handle()
        return reader

    def close(self) -> None:
        """Stop the program and close its stderr log."""
        self.program.stop()
        if self.program.log is not None:
            self.program.log.close()
