"""Shared pytest fixtures: the real llama.cpp oracle, started once per test process, and upstream templates."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from oracle.build import binary_path, ensure_binary
from oracle.client import BINARY_ENV, Oracle
from templates.upstream import ensure_source

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture(scope="session", autouse=True)
def oracle_built(pytestconfig: pytest.Config) -> None:
    """The oracle binary, built before the first test, past pytest's capture: where it builds and its progress
    show (a first run downloads and compiles for minutes)."""
    if os.environ.get(BINARY_ENV) or binary_path().exists():
        return
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        ensure_binary()


@pytest.fixture(scope="session")
def oracle() -> Iterator[object]:
    """The llama.cpp oracle at the default pin (built on first use, cached across runs)."""
    client = Oracle()
    yield client
    client.close()


@pytest.fixture(scope="session")
def upstream_templates() -> Path:
    """The directory of the upstream templates at the default pin."""
    return ensure_source() / "models" / "templates"


@pytest.fixture(scope="session")
def render_upstream(oracle: Any, upstream_templates: Path) -> Callable[..., Any]:
    """Render an upstream template with the oracle: one user question, the weather tool offered, a pinned clock."""

    def render(name: str, **fields: Any) -> Any:
        request = {
            "template": (upstream_templates / name).read_text(encoding="utf-8"),
            "bos": "",
            "eos": "",
            "messages": [{"role": "user", "content": "What's the weather in Rio?"}],
            "tools": [WEATHER_TOOL],
            "tool_choice": "auto",
            "enable_thinking": True,
            "now": "2025-06-15T10:30:00Z",
        }
        return oracle.render({**request, **fields})

    return render
