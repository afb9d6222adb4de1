"""A parser's policies: its documented departures from llama.cpp, each a name, a reason, where the parser documents
it and the rule that predicts it (`harness.policy_rules`), read from `policies.toml` in its expectations."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from chatparity.model import Message, Reading
from harness.compare import agrees
from harness.expectation_files import read_tables
from harness.policy_rules import KEPT_STREAM, RULES, Point, Rule

POLICIES_FILE = "policies.toml"
FIELDS = ("name", "rule", "reason", "documented")
BREAKABLE = ("consistent",)
"""The stream checks a policy may break by its own rule (`breaks`): a parser whose stream ends otherwise than its
plain answer on purpose."""
NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


class PolicyFileError(Exception):
    """A policies file that cannot be used as written."""


@dataclass(frozen=True)
class Policy:
    """One documented rule of a parser: its name, the rule predicting it, why, and where the parser says so."""

    name: str
    rule: str
    reason: str
    documented: str
    breaks: tuple[str, ...] = ()

    @property
    def predicts(self) -> Rule:
        """The rule's function."""
        return RULES[self.rule]


@dataclass(frozen=True)
class Policies:
    """A parser's policies, in the order they are applied."""

    policies: tuple[Policy, ...] = ()

    def explain(self, expected: Reading, actual: Reading, point: Point) -> tuple[str, ...] | None:
        """The names of the policies that together turn llama.cpp's reading into the parser's, in their order
        (None when they do not). A `kept_stream` policy replaces llama.cpp's reading by what its stream showed,
        which the other policies then turn into the parser's snapshot of it (as if cut there) and finish."""
        if not self.policies or not isinstance(expected, Message) or not isinstance(actual, Message):
            return None
        found = self.folded(expected, actual, (point,))
        if found is not None:
            return found
        kept = next((policy for policy in self.policies if policy.rule == KEPT_STREAM), None)
        shown = kept.predicts(expected, actual, point) if kept is not None else None
        if kept is None or shown is None:
            return None
        rest = self.folded(shown, actual, (dataclasses.replace(point, cut=True), point))
        return None if rest is None else tuple(dict.fromkeys((kept.name, *rest)))

    def folded(self, expected: Message, actual: Message, points: tuple[Point, ...]) -> tuple[str, ...] | None:
        """The policies (kept_stream aside) that turn `expected` into `actual`, each tried in order at each
        point in turn (None when they do not)."""
        used: list[str] = []
        for point in points:
            for policy in self.policies:
                if agrees(expected, actual):
                    return tuple(used)
                if policy.rule == KEPT_STREAM:
                    continue
                changed = policy.predicts(expected, actual, point)
                if changed is not None and changed != expected:
                    expected = changed
                    used.append(policy.name)
        return tuple(used) if agrees(expected, actual) else None

    def broken_by(self, label: str) -> tuple[str, ...]:
        """The stream checks the policies a label names (`name+name`) break by their own rule."""
        names = set(label.split("+"))
        return tuple(dict.fromkeys(check for policy in self.policies if policy.name in names
                                   for check in policy.breaks))

    @property
    def names(self) -> tuple[str, ...]:
        """The policies' names, in order."""
        return tuple(policy.name for policy in self.policies)


NO_POLICIES = Policies()


def load_policies(path: Path) -> Policies:
    """Read and check a policies file: `[[policy]]` entries with name, rule, reason and documented."""
    entries = read_tables(path, "policy", "policies", PolicyFileError)
    if not isinstance(entries, list):
        raise PolicyFileError(f"{path}: 'policy' must be an array of tables ([[policy]])")
    policies = tuple(policy_entry(path, number, raw) for number, raw in enumerate(entries, start=1))
    seen: set[str] = set()
    for number, policy in enumerate(policies, start=1):
        if policy.name in seen:
            raise PolicyFileError(f"{path}: [[policy]] #{number}: field 'name': {policy.name!r} is named twice")
        seen.add(policy.name)
    return Policies(policies)


def policy_entry(path: Path, number: int, raw: object) -> Policy:
    """One checked `[[policy]]` entry."""
    where = f"{path}: [[policy]] #{number}"
    if not isinstance(raw, dict):
        raise PolicyFileError(f"{where}: not a table")
    unknown = set(raw) - set(FIELDS) - {"breaks"}
    if unknown:
        raise PolicyFileError(f"{where}: unknown keys {sorted(unknown)}")
    breaks = raw.get("breaks", [])
    if not isinstance(breaks, list) or not set(breaks) <= set(BREAKABLE):
        raise PolicyFileError(f"{where}: field 'breaks': {breaks!r} is not a list of {', '.join(BREAKABLE)}")
    for name in FIELDS:
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise PolicyFileError(f"{where}: field {name!r}: missing or not a non-empty string")
    if not set(raw["name"]) <= NAME_CHARACTERS:
        raise PolicyFileError(f"{where}: field 'name': {raw['name']!r} is not lowercase letters, digits, _ or -")
    if raw["rule"] not in RULES:
        raise PolicyFileError(f"{where}: field 'rule': {raw['rule']!r} is not one of {', '.join(RULES)}")
    return Policy(raw["name"], raw["rule"], raw["reason"], raw["documented"], tuple(breaks))


def policies_in(directory: Path | None) -> Policies:
    """The policies of an expectations directory (none without one, or without a policies file)."""
    if directory is None or not (directory / POLICIES_FILE).is_file():
        return NO_POLICIES
    return load_policies(directory / POLICIES_FILE)
