"""`peers/launch.py sglang.settings DIR`: the force_reasoning SGLang's adapter finds for each session read on
stdin (one JSON session a line; `null` where it declines the session), so a reproducer replays a case with the
setting the sweep read it with."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from peers.sglang import runtime
from peers.sglang.adapter import PARSERS_FILE, SglangPeer, read_choices
from peers.wire import Unsupported


def main(expectations: Path) -> None:
    """One JSON line out for each session in."""
    peer = SglangPeer(runtime.load(), read_choices(expectations / PARSERS_FILE))
    for line in sys.stdin:
        try:
            force = peer.open(json.loads(line)).force_reasoning
        except Unsupported:
            force = None
        sys.stdout.write(json.dumps(force) + "\n")
        sys.stdout.flush()
