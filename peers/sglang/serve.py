"""`peers/launch.py sglang.serve DIR`: SGLang's adapter on the JSON-lines protocol, with the parsers chosen in
DIR."""

from __future__ import annotations

from pathlib import Path

from peers.sglang import runtime
from peers.sglang.adapter import PARSERS_FILE, SglangPeer, read_choices
from peers.wire import serve


def main(expectations: Path) -> None:
    """Load SGLang, then answer requests until stdin closes."""
    api = runtime.load()
    peer = SglangPeer(api, read_choices(expectations / PARSERS_FILE))
    serve(peer.open, {"name": "sglang", "revision": api.version})
