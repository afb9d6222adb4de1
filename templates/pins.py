"""The pinned llama-cpp-python sdists the oracle is built from: version -> sdist sha256 and llama.cpp commit."""

from __future__ import annotations

import os
from typing import NamedTuple

from chatparity.model import InputError

DEFAULT_VERSION = "0.3.36"
VERSION_ENV = "CHATPARITY_ORACLE_VERSION"


class PinError(InputError, ValueError):
    """A version with no pin."""


class Pin(NamedTuple):
    """One pinned llama-cpp-python release: the sha256 of its sdist and the llama.cpp commit it vendors."""

    sdist_sha256: str
    llama_cpp_commit: str


PINS: dict[str, Pin] = {
    "0.3.35": Pin("1139dbb54509074b70893fab8554e3b079aa9f4d312058ce4018ef0019e3de12", "4df29be4f"),
    "0.3.36": Pin("832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e", "0c1e57098"),
}


def resolve_version(version: str | None = None) -> str:
    """The version asked for, else $CHATPARITY_ORACLE_VERSION, else the default."""
    return version or os.environ.get(VERSION_ENV) or DEFAULT_VERSION


def pin_of(version: str) -> Pin:
    """The pin of a version, or a clear error naming the pinned versions."""
    try:
        return PINS[version]
    except KeyError:
        raise PinError(
            f"llama-cpp-python {version} is not pinned; pinned versions: {', '.join(sorted(PINS))}. "
            f"Add it to templates/pins.py with the sha256 of its sdist from PyPI."
        ) from None
