"""A pytest plugin for the sweep's tests: writes the installed packages its session loaded plugins from (as
JSON) to the file named by CHATPARITY_PLUGINS."""

from __future__ import annotations

import json
import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Note the packages whose plugins the session loaded through their entry points."""
    names = sorted({dist.project_name for _, dist in config.pluginmanager.list_plugin_distinfo()})
    with open(os.environ["CHATPARITY_PLUGINS"], "w", encoding="utf-8") as file:
        json.dump(names, file)
