"""The pinned source, the build's tool checks and the `chatparity oracle` command."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from oracle import build, commands
from oracle.build import BuildError, find_tools, source_hash
from templates.pins import DEFAULT_VERSION, PINS, PinError, pin_of, resolve_version
from templates.upstream import SourceError, cache_root, ensure_sdist, extract_vendor, sdist_path


def test_the_cache_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "chatparity"
    assert sdist_path("0.3.36") == tmp_path / "chatparity" / "sdist" / "llama_cpp_python-0.3.36.tar.gz"


def test_a_cached_sdist_with_the_wrong_hash_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = sdist_path(DEFAULT_VERSION)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not the sdist")
    with pytest.raises(SourceError, match="does not match the pin") as error:
        ensure_sdist(DEFAULT_VERSION)
    assert str(path) in str(error.value)


def test_only_vendor_llama_cpp_is_extracted(tmp_path):
    sdist = tmp_path / "pkg.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for name in ["pkg-1/vendor/llama.cpp/CMakeLists.txt", "pkg-1/vendor/llama.cpp/models/templates/a.jinja",
                     "pkg-1/llama_cpp/llama.py", "pkg-1/vendor/other/x.c"]:
            data = name.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    extract_vendor(sdist, tmp_path / "out")
    files = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files == ["llama.cpp/CMakeLists.txt", "llama.cpp/models/templates/a.jinja"]


def test_an_unpinned_version_is_a_clear_error():
    with pytest.raises(PinError, match="0.0.1 is not pinned; pinned versions: 0.3.35, 0.3.36"):
        pin_of("0.0.1")
    assert PINS["0.3.36"].llama_cpp_commit == "0c1e57098"


def test_the_version_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv("CHATPARITY_ORACLE_VERSION", "0.3.35")
    assert resolve_version(None) == "0.3.35"
    assert resolve_version("0.3.36") == "0.3.36"
    monkeypatch.delenv("CHATPARITY_ORACLE_VERSION")
    assert resolve_version(None) == DEFAULT_VERSION


def test_missing_build_tools_say_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(BuildError, match=r"cmake \(apt install cmake.*a C\+\+17 compiler \(apt install g\+\+\)"):
        find_tools()


def test_oracle_info_reports_the_pin_and_the_source_hash(capsys):
    assert commands.main(["info"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info == {"llama_cpp_commit": "0c1e57098", "llama_cpp_python_version": "0.3.36",
                    "sdist_sha256": PINS["0.3.36"].sdist_sha256, "build_id": source_hash()}


def test_oracle_render_prints_the_format_and_prompt(capsys):
    assert commands.main(["render", "--template", "Qwen-Qwen3-0.6B.jinja", "--tools"]) == 0
    out = capsys.readouterr().out
    assert "format: peg-native" in out
    assert "What is the weather in Paris?" in out and '"name": "get_weather"' in out


def test_oracle_render_names_a_missing_template(capsys):
    assert commands.main(["render", "--template", "no-such.jinja"]) == 1
    assert "no template file 'no-such.jinja'" in capsys.readouterr().err


def test_the_build_id_changes_with_any_oracle_source(monkeypatch, tmp_path):
    package = Path(build.__file__).parent
    copy = tmp_path / "oracle"
    shutil.copytree(package / "src", copy / "src")
    shutil.copy2(package / "CMakeLists.txt", copy / "CMakeLists.txt")
    monkeypatch.setattr(build, "PACKAGE_DIR", copy)
    original = source_hash()
    (copy / "src" / "oracle.cpp").write_text((copy / "src" / "oracle.cpp").read_text() + "\n")
    edited = source_hash()
    (copy / "src" / "extra.h").write_text("")
    assert len({original, edited, source_hash()}) == 3
