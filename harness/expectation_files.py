"""Reading a file of a parser's expectations: TOML holding one array of tables, every fault one line naming the
file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_tables(path: Path, key: str, what: str, error: type[Exception]) -> Any:
    """The value under `key` (`[[key]]` entries) of the TOML file `path`, a `what` file; `error` for a missing
    file, bad TOML or another top-level key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as failure:
        raise error(f"{path}: not valid TOML: {failure}") from None
    unknown = set(data) - {key}
    if unknown:
        raise error(f"{path}: unknown top-level keys {sorted(unknown)}; use [[{key}]]")
    return data.get(key, [])
