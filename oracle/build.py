"""Building the oracle: our C++ sources against the pinned llama.cpp, with CMake and Ninja, cached per source hash."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from chatparity.files import fault
from templates.pins import pin_of, resolve_version
from templates.upstream import cache_lock, ensure_source, version_dir

TARGET = "chatparity-oracle"
PACKAGE_DIR = Path(__file__).resolve().parent


class BuildError(RuntimeError):
    """The oracle could not be built: a missing tool, or a failed configure or compile step."""


@dataclass(frozen=True)
class Tools:
    """The build tools found on this machine."""

    cmake: str
    ninja: str
    cxx: str


def vocab_path(file: str, version: str | None = None) -> Path:
    """A vocab-only GGUF the pinned sdist ships (llama.cpp/models/ggml-vocab-FILE.gguf), extracted on first use."""
    models = ensure_source(resolve_version(version)) / "models"
    path = models / f"ggml-vocab-{file}.gguf"
    if not path.is_file():
        shipped = sorted(p.name[len("ggml-vocab-") : -len(".gguf")] for p in models.glob("ggml-vocab-*.gguf"))
        raise FileNotFoundError(f"the sdist ships no vocab {file!r} in {models}: it has {', '.join(shipped)}")
    return path


def oracle_sources() -> list[Path]:
    """Our oracle sources: the CMake project and everything under src/."""
    return [PACKAGE_DIR / "CMakeLists.txt"] + sorted(p for p in (PACKAGE_DIR / "src").rglob("*") if p.is_file())


def source_hash() -> str:
    """A short hash of our oracle sources (names and contents): the build id."""
    digest = hashlib.sha256()
    for path in oracle_sources():
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def binary_path(version: str | None = None) -> Path:
    """Where the oracle binary of a version and of the current sources lives (VERSION/bin/SRCHASH/)."""
    return version_dir(resolve_version(version)) / "bin" / source_hash() / TARGET


def find_tools() -> Tools:
    """cmake, ninja and a C++ compiler, or a BuildError saying what to install."""
    missing = []
    cmake = shutil.which("cmake")
    if cmake is None:
        missing.append("cmake (apt install cmake, or pip install cmake)")
    ninja = shutil.which("ninja") or python_ninja()
    if ninja is None:
        missing.append("ninja (pip install ninja, or apt install ninja-build)")
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        missing.append("a C++17 compiler (apt install g++)")
    if cmake is None or ninja is None or cxx is None:
        raise BuildError("building the llama.cpp oracle needs " + "; ".join(missing))
    return Tools(cmake=cmake, ninja=ninja, cxx=cxx)


def python_ninja() -> str | None:
    """The ninja executable of the `ninja` PyPI package, when it is installed."""
    try:
        import ninja  # type: ignore[import-not-found]
    except ImportError:
        return None
    path = Path(ninja.BIN_DIR) / "ninja"
    return str(path) if path.exists() else None


def ensure_binary(version: str | None = None, log: TextIO | None = None) -> Path:
    """The oracle binary for a version, built on first use: where it builds, and its progress, go to `log`
    (stderr as it is when called, by default). A cache directory that cannot be made is a FileFault."""
    log = log or sys.stderr
    version = resolve_version(version)
    path = binary_path(version)
    if path.exists():
        return path
    where = version_dir(version)
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise fault(where, error, "set XDG_CACHE_HOME (or HOME) to a directory this user can write") from None
    print(f"chatparity: the llama.cpp oracle of llama-cpp-python {version} is not built yet; building it in "
          f"{where} (the first build downloads a 76 MB sdist and compiles for several minutes)", file=log, flush=True)
    with cache_lock(f"build-{version}"):
        if not path.exists():
            build(version, path, log)
    return path


def stage_sources(stage: Path) -> None:
    """Copy our oracle sources into the staging directory the build tree is configured from."""
    stage.mkdir(parents=True, exist_ok=True)
    shutil.copy2(PACKAGE_DIR / "CMakeLists.txt", stage / "CMakeLists.txt")
    if (stage / "src").exists():
        shutil.rmtree(stage / "src")
    shutil.copytree(PACKAGE_DIR / "src", stage / "src")


def build(version: str, destination: Path, log: TextIO) -> None:
    """Configure (cheap when the tree exists), build only the oracle target, install it at `destination`."""
    tools = find_tools()
    pin = pin_of(version)
    llama_cpp = ensure_source(version)
    stage = version_dir(version) / "oracle-src"
    tree = version_dir(version) / "build"
    stage_sources(stage)
    print(f"chatparity: configuring the oracle build for llama-cpp-python {version} in {tree}", file=log, flush=True)
    configure = [tools.cmake, "-S", str(stage), "-B", str(tree)]
    if not (tree / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tools.ninja}", f"-DCMAKE_CXX_COMPILER={tools.cxx}",
                      "-DCMAKE_BUILD_TYPE=Release"]
    configure += [
        f"-DLLAMA_CPP_DIR={llama_cpp}",
        f"-DCHATPARITY_LLAMA_CPP_COMMIT={pin.llama_cpp_commit}",
        f"-DCHATPARITY_LLAMA_CPP_PYTHON_VERSION={version}",
        f"-DCHATPARITY_SDIST_SHA256={pin.sdist_sha256}",
        f"-DCHATPARITY_BUILD_ID={destination.parent.name}",
    ]
    run_step("cmake configure", configure, log, show_progress=False)
    print("chatparity: building the oracle (the first build of llama.cpp takes several minutes)", file=log, flush=True)
    ninja = configured_ninja(tree) or tools.ninja
    run_step("ninja", [ninja, "-C", str(tree), TARGET], log, show_progress=True)
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_suffix(".partial")
    shutil.copy2(tree / TARGET, partial)
    partial.replace(destination)
    print(f"chatparity: oracle installed at {destination}", file=log, flush=True)


def configured_ninja(tree: Path) -> str | None:
    """The ninja a build tree was configured with (another ninja version could reset its build log)."""
    for line in (tree / "CMakeCache.txt").read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_MAKE_PROGRAM:"):
            program = line.split("=", 1)[1]
            return program if Path(program).is_file() else None
    return None


def run_step(name: str, command: list[str], log: TextIO, show_progress: bool) -> None:
    """Run one build step; stream ninja's [n/m] lines when asked, and show the output tail when it fails."""
    lines: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace") as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if show_progress and line.startswith("["):
                print(f"  {line.rstrip()}", file=log, flush=True)
    if process.returncode != 0:
        tail = "\n".join(lines[-40:])
        raise BuildError(f"{name} failed (exit {process.returncode}): {' '.join(command)}\n{tail}")
