"""The peers the matrix can build: each at a pinned version, the pip steps that install it without torch into
an environment of its own, and the directory of its adapter and expectations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PEERS_ROOT = Path(__file__).resolve().parent
LAUNCHER = PEERS_ROOT / "launch.py"


@dataclass(frozen=True)
class Peer:
    """A peer parser: its name, pinned version and install steps (each the arguments of one `pip install`)."""

    name: str
    version: str
    steps: tuple[tuple[str, ...], ...]

    @property
    def key(self) -> str:
        """NAME-VERSION, its environment's directory name."""
        return f"{self.name}-{self.version}"

    @property
    def expectations(self) -> Path:
        """Its expectations directory: the parser chosen for each template, and its policies."""
        return PEERS_ROOT / self.name / "expectations"


SGLANG = Peer(
    "sglang",
    "0.5.23",
    (
        ("--no-deps", "sglang==0.5.23"),
        (
            "msgspec==0.23.0",
            "openai==2.8.0",
            "orjson==3.13.0",
            "partial-json-parser==0.2.1.1.post7",
            "regex==2026.12.2",
            "pydantic==2.14.4",
            "jinja2==3.1.6",
            "numpy==2.4.6",
            "pybase64==1.5.1",
            "requests==2.34.2",
            "tqdm==4.70.1",
        ),
    ),
)
"""SGLang's wheel pins torch, flashinfer, xgrammar and about 70 more: it goes in without them, then the
pure-Python modules its parsers and request models import (`peers/sglang/runtime.py` stands in for others)."""

TRANSFORMERS = Peer("transformers", "5.25.0", (("transformers==5.25.0",),))
"""transformers' response templates need neither torch nor a model: its own dependencies are pure Python or
wheels."""

PEERS = {peer.name: peer for peer in (SGLANG, TRANSFORMERS)}


def peers_named(text: str) -> list[Peer]:
    """The peers a `--peers a,b` list names; a ValueError names an unknown one."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PEERS]
    if unknown or not names:
        raise ValueError(
            f"--peers {text!r}: unknown peer {', '.join(unknown) or '(none)'}; known: {', '.join(PEERS)}"
        )
    return [PEERS[name] for name in names]
