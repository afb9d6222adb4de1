"""A stand-in for llama-server in the process tests: /health, /props and a chat endpoint that answers, hangs or
dies as FAKE_LLAMA_SERVER says (ok, hang, die, nobind)."""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = os.environ.get("FAKE_LLAMA_SERVER", "ok")


def option(name: str) -> str:
    """The value after `name` on the command line."""
    return sys.argv[sys.argv.index(name) + 1]


class Handler(BaseHTTPRequestHandler):
    """The fake's endpoints."""

    def answer(self, data: object) -> None:
        """Send JSON."""
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        """/health and /props."""
        if self.path == "/health":
            self.answer({"status": "ok"})
        else:
            self.answer({"model_path": option("-m"), "eos_token": "</s>"})

    def do_POST(self) -> None:
        """Any POST: answer, hang or die."""
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if MODE == "hang":
            time.sleep(3600)
        if MODE == "die":
            os._exit(3)
        self.answer({"ok": True})

    def log_message(self, *args: object) -> None:
        """Quiet."""


if __name__ == "__main__":
    if MODE == "nobind":
        print("couldn't bind HTTP server socket", flush=True)
        sys.exit(1)
    ThreadingHTTPServer((option("--host"), int(option("--port"))), Handler).serve_forever()
