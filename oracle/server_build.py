"""Building llama.cpp's own llama-server from the pinned source, out of tree, cached per version and flags."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TextIO

from chatparity.files import fault
from oracle.build import BuildError, configured_ninja, find_tools, run_step
from templates.pins import resolve_version
from templates.upstream import cache_lock, ensure_source, version_dir

TARGET = "llama-server"
FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
)


class ServerBuildError(BuildError):
    """llama-server could not be built: one line, the full output in a file."""


def flags_key() -> str:
    """A short hash of the configure flags: the build id."""
    return hashlib.sha256("\0".join(FLAGS).encode()).hexdigest()[:16]


def build_dir(version: str | None = None) -> Path:
    """The build tree of a version and of the current flags (VERSION/llama-server/FLAGSHASH/)."""
    return version_dir(resolve_version(version)) / "llama-server" / flags_key()


def server_path(version: str | None = None) -> Path:
    """Where the built llama-server lives; it finds its shared libraries beside it."""
    return build_dir(version) / "bin" / TARGET


def ensure_server(version: str | None = None, log: TextIO | None = None) -> Path:
    """The llama-server binary of a version, built on first use, with progress going to `log` (stderr by default).
    A missing tool or failed step is a ServerBuildError; a cache directory that cannot be made is a FileFault."""
    log = log or sys.stderr
    version = resolve_version(version)
    path = server_path(version)
    if path.exists():
        return path
    tree = build_dir(version)
    try:
        tree.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise fault(tree, error, "set XDG_CACHE_HOME (or HOME) to a directory this user can write") from None
    with cache_lock(f"server-build-{version}"):
        if not path.exists():
            try:
                build(version, tree, log)
            except BuildError as error:
                report = tree / "build-error.log"
                report.write_text(str(error), encoding="utf-8")
                first = str(error).splitlines()[0]
                raise ServerBuildError(f"llama-server could not be built: {first} (full output in {report})") from None
    return path


def build(version: str, tree: Path, log: TextIO) -> None:
    """Configure (cheap when the tree exists) and build only the llama-server target into `tree`."""
    tools = find_tools()
    source = ensure_source(version)
    print(f"chatparity: building llama-server of llama-cpp-python {version} in {tree} (the first build compiles "
          "for about ten minutes)", file=log, flush=True)
    configure = [tools.cmake, "-S", str(source), "-B", str(tree)]
    if not (tree / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tools.ninja}", f"-DCMAKE_CXX_COMPILER={tools.cxx}"]
    run_step("cmake configure", configure + list(FLAGS), log, show_progress=False)
    ninja = configured_ninja(tree) or tools.ninja
    run_step("ninja", [ninja, "-C", str(tree), TARGET], log, show_progress=True)
    print(f"chatparity: llama-server built at {server_path(version)}", file=log, flush=True)
