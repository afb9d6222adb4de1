"""Known template behaviours: the deliberate history rewrites the multi-turn check reports as known."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from harness.multiturn_checks import Break

DEFAULT_PATH = Path(__file__).with_name("known_template_behaviours.toml")
FIELDS = ("template", "mode", "break", "reason")


class BehaviourFileError(Exception):
    """A known-behaviours file that cannot be used as written."""


@dataclass(frozen=True)
class Behaviour:
    """One entry: which templates and modes (globs) break the append how, and why the template does it."""

    template: str
    mode: str
    breaks: Break
    reason: str

    def covers(self, template: str, mode: str, breaks: str) -> bool:
        """Whether a break of a template under a mode is this known behaviour."""
        return breaks == self.breaks.value and fnmatch(template, self.template) and fnmatch(mode, self.mode)


def load_behaviours(path: Path = DEFAULT_PATH) -> tuple[Behaviour, ...]:
    """The entries of a known-behaviours file, each checked (a clear error names the entry and field)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BehaviourFileError(f"{path}: cannot read: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise BehaviourFileError(f"{path}: not valid TOML: {error}") from error
    return tuple(_entry(path, number, raw) for number, raw in enumerate(data.get("behaviour", []), start=1))


def _entry(path: Path, number: int, raw: dict[str, object]) -> Behaviour:
    """One checked [[behaviour]] entry."""
    where = f"{path}: [[behaviour]] #{number}"
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise BehaviourFileError(f"{where}: unknown field {unknown[0]!r}; expected {', '.join(FIELDS)}")
    for name in ("template", "break", "reason"):
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise BehaviourFileError(f"{where}: {name!r} must be a non-empty string")
    try:
        breaks = Break(raw["break"])
    except ValueError:
        names = ", ".join(repr(each.value) for each in Break)
        raise BehaviourFileError(
            f"{where}: unknown break {raw['break']!r}; expected one of {names}"
        ) from None
    mode = raw.get("mode", "*")
    if not isinstance(mode, str):
        raise BehaviourFileError(f"{where}: 'mode' must be a string")
    return Behaviour(str(raw["template"]), mode, breaks, str(raw["reason"]))


def known_reason(behaviours: tuple[Behaviour, ...], template: str, mode: str, breaks: str) -> str:
    """The reason of the first entry covering a break, '' when none does."""
    return next((each.reason for each in behaviours if each.covers(template, mode, breaks)), "")
