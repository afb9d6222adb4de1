"""Run a module of a peer's adapter in the peer's own environment: `PYTHON peers/launch.py NAME.MODULE
EXPECTATIONS_DIR` (`sglang.serve`, say), where PYTHON is the peer's environment's interpreter; only the
standard-library modules of `peers` are imported."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path[0] = str(Path(__file__).resolve().parent.parent)
    importlib.import_module(f"peers.{sys.argv[1]}").main(Path(sys.argv[2]))
