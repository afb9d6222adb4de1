"""The pinned llama.cpp source: the llama-cpp-python sdist from PyPI, checked and extracted into the cache."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from templates.pins import pin_of, resolve_version

VENDOR_PREFIX = "vendor/llama.cpp/"


class SourceError(RuntimeError):
    """The pinned source could not be fetched or does not match its pin."""


def cache_root() -> Path:
    """The chatparity cache directory ($XDG_CACHE_HOME/chatparity, default ~/.cache/chatparity)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chatparity"


def version_dir(version: str) -> Path:
    """The cache directory of one llama-cpp-python version."""
    return cache_root() / version


@contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """An exclusive lock on a cache entry, so parallel test workers fetch and build once."""
    path = cache_root() / "locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def sha256_of(path: Path) -> str:
    """The sha256 hex digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sdist_path(version: str) -> Path:
    """Where the sdist of a version is cached."""
    return cache_root() / "sdist" / f"llama_cpp_python-{version}.tar.gz"


def ensure_sdist(version: str) -> Path:
    """The checked sdist of a version, downloaded with pip on first use."""
    pin = pin_of(version)
    path = sdist_path(version)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"chatparity: downloading the llama-cpp-python=={version} sdist from PyPI into {path.parent}",
              file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                       "--dest", tmp, f"llama-cpp-python=={version}"]
            result = subprocess.run(command, check=False, stdout=sys.stderr, stderr=sys.stderr)
            if result.returncode != 0:
                raise SourceError(f"pip download of llama-cpp-python=={version} failed (exit {result.returncode})")
            downloaded = list(Path(tmp).glob("*.tar.gz"))
            if len(downloaded) != 1:
                raise SourceError(f"pip download left {[p.name for p in Path(tmp).iterdir()]}, expected one sdist")
            downloaded[0].replace(path)
    actual = sha256_of(path)
    if actual != pin.sdist_sha256:
        raise SourceError(
            f"{path}: sha256 {actual} does not match the pin {pin.sdist_sha256} of llama-cpp-python {version}; "
            f"delete the file to download it again, or fix templates/pins.py"
        )
    return path


def ensure_source(version: str | None = None) -> Path:
    """The vendored llama.cpp tree of a version (VERSION/llama.cpp in the cache), extracted on first use."""
    version = resolve_version(version)
    target = version_dir(version) / "llama.cpp"
    if (target / "CMakeLists.txt").exists():
        return target
    with cache_lock(f"source-{version}"):
        if (target / "CMakeLists.txt").exists():
            return target
        sdist = ensure_sdist(version)
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            extract_vendor(sdist, Path(tmp))
            if target.exists():
                shutil.rmtree(target)
            (Path(tmp) / "llama.cpp").replace(target)
    return target


def extract_vendor(sdist: Path, into: Path) -> None:
    """Extract the sdist's vendor/llama.cpp tree as `into`/llama.cpp."""
    with tarfile.open(sdist) as archive:
        members = []
        for member in archive.getmembers():
            parts = member.name.split("/", 1)
            if len(parts) < 2 or not parts[1].startswith(VENDOR_PREFIX):
                continue
            member.name = "llama.cpp/" + parts[1][len(VENDOR_PREFIX):]
            members.append(member)
        if not members:
            raise SourceError(f"{sdist}: no {VENDOR_PREFIX} tree in the sdist")
        archive.extractall(into, members=members, filter="data")
