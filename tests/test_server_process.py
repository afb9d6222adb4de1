"""llama-server children are stopped on every exit path, restarted after a hang or a crash, and never share a port
(with a stand-in server, so no build is needed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from chatparity.model import ParserCrashed, ParserTimeout
from harness import server_client
from harness.server_parser import restarting
from harness.server_process import LIVE, LOG_LIMIT, ServerFailed, ServerProcess

ROOT = Path(__file__).resolve().parent.parent
FAKE = Path(__file__).resolve().parent / "fake_llama_server.py"


def fake_binary(tmp_path: Path) -> Path:
    """An executable that runs the stand-in server in its own PID."""
    binary = tmp_path / "llama-server"
    binary.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} \"$@\"\n")
    binary.chmod(0o755)
    return binary


def server(tmp_path: Path, name: str = "a") -> ServerProcess:
    """A stand-in server process (not started)."""
    model = tmp_path / f"{name}.gguf"
    model.write_bytes(b"")
    return ServerProcess(fake_binary(tmp_path), model, tmp_path / "t.jinja", tmp_path / f"{name}.log")


def gone(pid: int, wait: float = 10.0) -> bool:
    """Whether no process has this PID (a zombie of another parent counts as gone) within `wait` seconds."""
    due = time.monotonic() + wait
    while time.monotonic() < due:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_start_serves_and_stop_ends_the_process(tmp_path: Path) -> None:
    process = server(tmp_path)
    process.start()
    pid = process.process.pid
    assert process.alive() and pid in LIVE
    assert server_client.post(process.port, "/v1/chat/completions", {}, 5) == {"ok": True}
    process.stop()
    assert gone(pid) and pid not in LIVE


def test_two_servers_never_share_a_port(tmp_path: Path) -> None:
    first, second = server(tmp_path, "a"), server(tmp_path, "b")
    first.start()
    second.start()
    try:
        assert first.port != second.port
        assert first.alive() and second.alive()
    finally:
        first.stop()
        second.stop()


def test_a_server_that_cannot_start_is_one_error_with_its_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_SERVER", "nobind")
    process = server(tmp_path)
    with pytest.raises(ServerFailed, match="couldn't bind"):
        process.start()
    assert not LIVE


def test_a_hung_server_costs_the_row_and_is_restarted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_SERVER", "hang")
    process = server(tmp_path)
    process.start()
    hung = process.process.pid
    with pytest.raises(ParserTimeout), restarting(process, 0.5):
        server_client.post(process.port, "/v1/chat/completions", {}, 0.5)
    assert gone(hung) and process.alive() and process.process.pid != hung
    process.stop()


def test_a_crashed_server_costs_the_row_and_is_restarted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_SERVER", "die")
    process = server(tmp_path)
    process.start()
    crashed = process.process.pid
    with pytest.raises(ParserCrashed, match="llama-server lost"), restarting(process, 5):
        server_client.post(process.port, "/v1/chat/completions", {}, 5)
    assert process.alive() and process.process.pid != crashed
    process.stop()


HOLDER = textwrap.dedent("""
    import signal, sys, time
    from pathlib import Path
    # Ctrl-C ends the holder even when the tests run as a background job, whose children ignore SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from harness.server_process import ServerProcess
    tmp = Path(sys.argv[1])
    model = tmp / "m.gguf"
    model.write_bytes(b"")
    process = ServerProcess(tmp / "llama-server", model, tmp / "t.jinja", tmp / "holder.log")
    process.start()
    print(process.process.pid, flush=True)
    if sys.argv[2] == "crash":
        raise RuntimeError("the parser crashed")
    if sys.argv[2] == "done":
        sys.exit(0)
    time.sleep(60)
""")


@pytest.mark.parametrize(("ending", "signum"), [
    ("done", None), ("crash", None), ("wait", signal.SIGINT), ("wait", signal.SIGTERM), ("wait", signal.SIGKILL),
])
def test_no_server_outlives_the_process_that_started_it(tmp_path: Path, ending: str, signum: int | None) -> None:
    fake_binary(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), ending], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert holder.stdout is not None
    pid = int(holder.stdout.readline())
    if signum is not None:
        holder.send_signal(signum)
    holder.wait(30)
    assert gone(pid), f"the server {pid} outlived its holder ({ending}, {signum})"


def test_the_debug_log_is_emptied_past_its_limit(tmp_path: Path) -> None:
    process = server(tmp_path)
    process.log.write_bytes(b"x" * 100)
    process.trim_log()
    assert process.log_size() == 100
    process.log.write_bytes(b"x" * (LOG_LIMIT + 1))
    process.trim_log()
    assert process.log_size() == 0 and process.log_since(0) == ""
