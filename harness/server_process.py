"""One llama-server child on 127.0.0.1: started on a free port, waited for, stopped by its PID on every exit path."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

HOST = "127.0.0.1"
START_TIMEOUT = 60.0
STOP_GRACE = 5.0
PORT_TRIES = 5
CONTEXT = 8192
LOG_LIMIT = 16 << 20
LIVE: dict[int, subprocess.Popen[bytes]] = {}


class ServerFailed(RuntimeError):
    """llama-server did not start, or died: what it said last."""


def free_port() -> int:
    """A port no socket on 127.0.0.1 holds now (another process may take it before the server binds: `start`
    tries again then)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def with_parent_death(command: list[str]) -> list[str]:
    """The command run so that the kernel kills it when the process that started it dies (util-linux
    `setpriv --pdeathsig`, where installed): a sweep killed outright leaves no server behind."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def stop_all() -> None:
    """Stop every server this process started and has not stopped yet."""
    for pid in list(LIVE):
        stop_pid(pid)


def stop_pid(pid: int) -> None:
    """SIGTERM the server with this PID, SIGKILL it after STOP_GRACE seconds, and reap it."""
    process = LIVE.pop(pid, None)
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: stop the servers, then end as the signal would."""
    stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def guard_exits() -> None:
    """Stop the servers at interpreter exit and on SIGTERM (SIGINT unwinds through `close` as
    KeyboardInterrupt); main thread only."""
    atexit.register(stop_all)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        try:
            signal.signal(signal.SIGTERM, on_signal)
        except ValueError:
            pass


def get_json(port: int, path: str, timeout: float = 2.0) -> Any:
    """GET a JSON document from the server."""
    with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=timeout) as response:
        return json.loads(response.read())


class ServerProcess:
    """A llama-server serving one tape with one chat template; `log` receives its output."""

    def __init__(self, binary: Path, model: Path, template: Path, log: Path) -> None:
        self.binary = binary
        self.model = model
        self.template = template
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    def command(self, port: int) -> list[str]:
        """The server's command line."""
        return [str(self.binary), "-m", str(self.model), "--jinja", "--chat-template-file", str(self.template),
                "--host", HOST, "--port", str(port), "-c", str(CONTEXT), "-np", "1", "--no-warmup", "-t", "1",
                "-lv", "5"]

    def start(self) -> None:
        """Start on a free port and wait until it serves this tape; a port taken meanwhile is tried again."""
        guard_exits()
        for _ in range(PORT_TRIES):
            port = free_port()
            with open(self.log, "ab") as out:
                process = subprocess.Popen(with_parent_death(self.command(port)), stdin=subprocess.DEVNULL,
                                           stdout=out, stderr=subprocess.STDOUT)
            LIVE[process.pid] = process
            self.process, self.port = process, port
            if self.wait_ready():
                return
            stop_pid(process.pid)
            if "bind" not in self.tail():
                break
        raise ServerFailed(f"llama-server did not start: {self.tail()}")

    def wait_ready(self) -> bool:
        """Whether the server answered /health with this tape loaded before it exited or timed out."""
        assert self.process is not None
        due = time.monotonic() + START_TIMEOUT
        while time.monotonic() < due and self.process.poll() is None:
            try:
                if get_json(self.port, "/health").get("status") == "ok":
                    return Path(get_json(self.port, "/props")["model_path"]) == self.model
            except (OSError, ValueError, KeyError, urllib.error.URLError):
                pass
            time.sleep(0.1)
        return False

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Stop the process by its PID."""
        if self.process is not None:
            stop_pid(self.process.pid)
            self.process = None

    def restart(self) -> None:
        """Stop, then start on a fresh port."""
        self.stop()
        self.start()

    def log_size(self) -> int:
        """How many bytes the server's log holds now."""
        try:
            return self.log.stat().st_size
        except OSError:
            return 0

    def trim_log(self) -> None:
        """Empty the server's log once it holds more than LOG_LIMIT bytes (the server appends, so it writes on
        from the start)."""
        if self.log_size() > LOG_LIMIT:
            os.truncate(self.log, 0)

    def log_since(self, offset: int) -> str:
        """What the server logged from byte `offset` on."""
        try:
            with open(self.log, "rb") as handle:
                handle.seek(offset)
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def tail(self, size: int = 2000) -> str:
        """The end of the server's log, on one line."""
        text = self.log_since(max(0, self.log_size() - size))
        return text.strip().replace("\n", " | ")
