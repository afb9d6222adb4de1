"""Compiled jinja2 templates kept on disk between processes (jinja2's bytecode cache), so a template source is
compiled once per machine rather than once per process that renders it."""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket, FileSystemBytecodeCache

DAMAGED = (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError)


def cache_directory(setup: Path) -> Path:
    """The bytecode folder of the environments a module sets up: $XDG_CACHE_HOME/chatparity/jinja/ (~/.cache
    when unset), then a hash of jinja2's and Python's versions and of the module's text, so a change to any
    of them compiles afresh."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    made_by = f"{jinja2.__version__}\0{sys.version}\0".encode() + setup.read_bytes()
    return base / "chatparity" / "jinja" / hashlib.sha256(made_by).hexdigest()[:16]


def from_source(env: jinja2.Environment, source: str, setup: Path) -> jinja2.Template:
    """`env.from_string(source)`, its code read from the bytecode cache of the module `setup` that made the
    environment, or compiled and written there; a damaged cache file is compiled over, and a cache that
    cannot be written is passed over."""
    directory = cache_directory(setup)
    cache = FileSystemBytecodeCache(str(directory))
    name = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        bucket = cache.get_bucket(env, name, None, source)
    except DAMAGED:
        bucket = Bucket(env, cache.get_cache_key(name), cache.get_source_checksum(source))
    if bucket.code is None:
        bucket.code = env.compile(source)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            cache.set_bucket(bucket)
        except OSError:
            pass
    return env.template_class.from_code(env, bucket.code, env.make_globals(None), None)
