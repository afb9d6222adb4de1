"""A run's rows classified by the labels the sweep gave them, and the parser's expectations checked against the run:
known divergences and policies that no longer hold anywhere (stale) or that the run did not exercise."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from harness.known_divergences import GLOB_FIELDS, SCOPE_FIELDS, UNEXPECTED, Divergence, KnownDivergences
from harness.labels import counts_of
from harness.policies import Policies, Policy
from reports.expectations import expectations_of
from reports.groups import distinct_codes, stream_groups, structure_groups
from reports.runs import Run
from reports.statuses import Status, status_column


@dataclass(frozen=True, eq=False)
class Verdict:
    """Rows with their status; the known divergences and policies that cover nothing (stale) or that the run did
    not exercise."""

    rows: pd.DataFrame
    stale: tuple[Divergence, ...]
    not_exercised: tuple[Divergence, ...]
    stale_policies: tuple[Policy, ...] = ()
    idle_policies: tuple[Policy, ...] = ()

    @cached_property
    def stream_failures(self) -> pd.DataFrame:
        """The ways the rows' streams break a check, grouped once (reports.groups.stream_groups)."""
        return stream_groups(self.rows)

    @cached_property
    def structure_failures(self) -> pd.DataFrame:
        """The ways the parser's finished readings break a structural check, grouped once."""
        return structure_groups(self.rows)

    @property
    def unexpected(self) -> pd.DataFrame:
        """Rows a known divergence selects that now match."""
        return self.rows[self.rows["status"] == Status.UNEXPECTED_MATCH.value]

    @property
    def strict_failures(self) -> int:
        """How many unexpected matches, stale known divergences and stale policies there are: each fails the
        gate."""
        return len(self.unexpected) + len(self.stale) + len(self.stale_policies)


class Scopes:
    """The rows of a frame that entries' globs select, each column factorized once so that a glob tests each
    distinct value of it once."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.factorized: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A column's codes and distinct values (a missing value is one of them)."""
        if name not in self.factorized:
            self.factorized[name] = distinct_codes(self.frame[name])
        return self.factorized[name]

    def mask(self, entry: Divergence, fields: tuple[str, ...] = GLOB_FIELDS) -> np.ndarray:
        """Which rows the entry's globs select on the given fields."""
        mask = np.ones(len(self.frame), dtype=bool)
        for name in fields:
            patterns = getattr(entry, name)
            if "*" in patterns:
                continue
            codes, values = self.column(name)
            chosen = np.array([any(fnmatch.fnmatchcase(str(value), pattern) for pattern in patterns)
                               for value in values], dtype=bool)
            mask &= chosen[codes]
        return mask


def explanations(rows: pd.DataFrame) -> set[str]:
    """Every name the rows' labels use: their known divergences and the policies of their readings and
    snapshots."""
    names: set[str] = set()
    for text in rows["explained"].dropna().unique():
        names.update(str(text).removeprefix(UNEXPECTED).split("+"))
    for text in rows["parity_explained"].dropna().unique():
        for label in counts_of(str(text)):
            names.update(label.split("+"))
    return names


def apply_expectations(
    rows: pd.DataFrame, sessions: pd.DataFrame, known: KnownDivergences, policies: Policies, complete: bool = False
) -> Verdict:
    """Give each row its status; find the known divergences and policies that cover nothing.

    A known divergence that covers no row is stale when it selects rows of the run (they fail otherwise than it
    says), or when the run was `complete` (not narrowed by a selection) and no session of it has the entry's
    template, family or syntax; otherwise the run did not exercise it. A policy no row's label names is stale in a
    complete run, else not exercised.
    """
    frame = rows.copy(deep=False)
    frame["status"] = status_column(frame)
    used = explanations(frame)
    scopes, session_scopes = Scopes(frame), Scopes(sessions)
    stale: list[Divergence] = []
    not_exercised: list[Divergence] = []
    for entry in known.entries:
        if entry.name in used:
            continue
        if scopes.mask(entry).any() or (complete and not session_scopes.mask(entry, (*SCOPE_FIELDS, "mode")).any()):
            stale.append(entry)
        else:
            not_exercised.append(entry)
    unused = [policy for policy in policies.policies if policy.name not in used]
    return Verdict(
        rows=frame,
        stale=tuple(stale),
        not_exercised=tuple(not_exercised),
        stale_policies=tuple(unused) if complete else (),
        idle_policies=() if complete else tuple(unused),
    )


def classify_run(run: Run) -> Verdict:
    """A run's rows classified by their labels, checked against the expectations of the parser its stamp
    names (none for a parser without expectations, such as llama.cpp itself)."""
    expectations = expectations_of(run.stamp)
    return apply_expectations(run.rows, run.sessions, expectations.known, expectations.policies, run.complete)
