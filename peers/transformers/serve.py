"""`peers/launch.py transformers.serve DIR`: transformers' adapter on the JSON-lines protocol, with the models
in DIR."""

from __future__ import annotations

from pathlib import Path

from peers.transformers import runtime
from peers.transformers.adapter import MODELS_FILE, TransformersPeer, read_models
from peers.wire import serve


def main(expectations: Path) -> None:
    """Load transformers, then answer requests until stdin closes."""
    api = runtime.load()
    peer = TransformersPeer(api, read_models(expectations / MODELS_FILE))
    serve(peer.open, {"name": "transformers", "revision": api.version})
