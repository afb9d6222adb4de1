"""A parser's gate baseline on disk: a line per case and outcome label with its chunkings (outcomes.csv, or
outcomes.csv.gz for a full profile's), and the pins of the runs it came from (stamp.json); read whole and checked,
written byte-stable."""

from __future__ import annotations

import csv
import gzip
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from chatparity.files import fault, remove_stale, replacing
from chatparity.model import Kind, Outcome
from harness.chunkings import validate as validate_chunking
from harness.labels import DEFECT
from harness.outcome_labels import CHECKS_MARK, POLICY, READING_MARK, label_outcome, label_reading
from reports.runs import PIN_KEYS, Run, chunking_key
from reports.statuses import STREAM_CHECKS, STRUCTURAL_CHECKS, run_labels

OUTCOMES = "outcomes.csv"
COMPRESSED_OUTCOMES = "outcomes.csv.gz"
COMPRESSED_PROFILES = ("full",)
"""Profiles whose baselines are written gzip-compressed (the full profile's labels run to tens of MB)."""
STAMP = "stamp.json"
INFO = ["template", "mode", "origin", "shape"]
COLUMNS = ["case_id", "chunking", "outcome", *INFO]
CASE_ID = re.compile(r"[^\s,]+")
COUNT = re.compile(r"[1-9][0-9]*")
DIGEST = re.compile(r"[0-9a-f]{10}")
NAMES = re.compile(r"[a-z0-9_-]+(?:\+[a-z0-9_-]+)*")
FILE_COLUMNS = [*INFO, "chunkings", "outcome", "case_id"]


class BaselineError(Exception):
    """A baseline directory that cannot be used."""


@dataclass(frozen=True)
class Baseline:
    """Outcome labels per (case, chunking) and the pins of the runs they came from."""

    outcomes: pd.DataFrame
    stamp: dict[str, object]


def outcome_labels() -> set[str]:
    """Every outcome label a baseline may hold besides a policy's and a llama.cpp defect's: each outcome, and
    mismatch with each kind."""
    mismatches = {f"{Outcome.MISMATCH.value}:{kind.value}" for kind in Kind}
    return {outcome.value for outcome in Outcome} | mismatches


def known_label(label: str, labels: set[str]) -> bool:
    """Whether a baseline label is an outcome label (a mismatch maybe with its reading's digest after ' @'), a
    policy's (policy:NAME+NAME) or a llama.cpp defect's (llama.cpp:NAME), with the stream and structural checks
    it breaks after ' !' if any, each maybe with its count of broken snapshots after '='."""
    head, _, broken = label.partition(CHECKS_MARK)
    outcome, digest = label_outcome(label), label_reading(label)
    pinned = outcome.startswith(Outcome.MISMATCH.value) and DIGEST.fullmatch(digest)
    named = outcome.startswith((POLICY, DEFECT)) and NAMES.fullmatch(outcome.partition(":")[2])
    if (outcome not in labels and not named) or (READING_MARK in head and not pinned):
        return False
    for item in broken.split(",") if broken else []:
        check, counts, count = item.partition("=")
        if check not in {*STREAM_CHECKS, *STRUCTURAL_CHECKS} or (counts and not COUNT.fullmatch(count)):
            return False
    return True


def baseline_line(
    file: Path, number: int, fields: list[str], labels: set[str], checked: tuple[set[str], set[str]]
) -> list[tuple[str, ...]]:
    """One checked line of outcomes.csv as (case_id, chunking, outcome, *INFO) records, or a BaselineError;
    `checked` holds the outcome and chunkings fields found valid on earlier lines (checked once each)."""
    if len(fields) != len(FILE_COLUMNS):
        raise BaselineError(f"{file}:{number}: expected {len(FILE_COLUMNS)} fields, found {len(fields)}")
    named = dict(zip(FILE_COLUMNS, fields))
    case, outcome, chunkings = named["case_id"], named["outcome"], named["chunkings"]
    valid_outcomes, valid_chunkings = checked
    if not CASE_ID.fullmatch(case):
        raise BaselineError(f"{file}:{number}: field 'case_id': {case[:40]!r} is not a case id")
    if outcome not in valid_outcomes:
        if not known_label(outcome, labels):
            raise BaselineError(f"{file}:{number}: field 'outcome': {outcome[:40]!r} is not an outcome")
        valid_outcomes.add(outcome)
    names = chunkings.split()
    if chunkings not in valid_chunkings:
        if not names:
            raise BaselineError(f"{file}:{number}: field 'chunkings': empty")
        for chunking in names:
            try:
                validate_chunking(chunking)
            except ValueError as error:
                raise BaselineError(f"{file}:{number}: field 'chunkings': {error}") from None
        valid_chunkings.add(chunkings)
    return [(case, chunking, outcome, *(named[key] for key in INFO)) for chunking in names]


def outcomes_file(directory: Path) -> Path | None:
    """The baseline's outcomes: outcomes.csv or outcomes.csv.gz (None when neither; an error when both)."""
    found = [directory / name for name in (OUTCOMES, COMPRESSED_OUTCOMES) if (directory / name).is_file()]
    if len(found) > 1:
        raise BaselineError(f"{directory}: holds both {OUTCOMES} and {COMPRESSED_OUTCOMES}; keep one")
    return found[0] if found else None


def read_outcomes(file: Path) -> pd.DataFrame:
    """outcomes.csv (or its gzip), every line checked (`outcome_lines`) and every field of every line valid;
    read a line at a time into columns that hold each distinct text once."""
    rows = csv.reader(outcome_lines(file))
    header = next(rows, None)
    if header != FILE_COLUMNS:
        found = ",".join(header) if header else "nothing"
        raise BaselineError(f"{file}: expected columns {','.join(FILE_COLUMNS)}, found {found}")
    labels = outcome_labels()
    checked: tuple[set[str], set[str]] = (set(), set())
    shared: dict[str, str] = {}
    columns: dict[str, list[str]] = {name: [] for name in COLUMNS}
    appends = [columns[name].append for name in COLUMNS]
    for number, fields in enumerate(rows, start=2):
        for record in baseline_line(file, number, fields, labels, checked):
            for append, value in zip(appends, record):
                append(shared.setdefault(value, value))
    del shared
    outcomes = pd.DataFrame({name: pd.array(columns.pop(name), dtype="str") for name in COLUMNS})
    duplicated = outcomes[outcomes.duplicated(["case_id", "chunking"])]
    if not duplicated.empty:
        first = duplicated.iloc[0]
        raise BaselineError(f"{file}: row {first['case_id']} {first['chunking']} is listed twice")
    return outcomes


def outcome_lines(file: Path) -> Iterator[str]:
    """The lines of outcomes.csv (or its gzip), read one at a time, each checked: UTF-8, no NUL byte, ended
    by a newline (the file is whole)."""
    compressed = file.name.endswith(".gz")
    with gzip.open(file, "rb") if compressed else file.open("rb") as stream:
        number = 0
        try:
            for number, line in enumerate(stream, start=1):
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise BaselineError(
                        f"{file}:{number}: not UTF-8 text (byte 0x{line[error.start]:02x})"
                    ) from None
                if "\0" in text:
                    raise BaselineError(f"{file}:{number}: holds a NUL byte")
                if not text.endswith("\n"):
                    break
                yield text
            else:
                if number:
                    return
        except (OSError, EOFError, zlib.error) as error:
            if not compressed:
                raise
            raise BaselineError(f"{file}: not a whole gzip file ({error})") from None
    raise BaselineError(f"{file}: truncated (the last line does not end in a newline)")


def read_pins(file: Path) -> dict[str, object]:
    """stamp.json, checked to hold every pin and the parser as a non-empty string."""
    try:
        stamp = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{file}: missing, so the baseline's pins cannot be checked") from None
    except ValueError as error:
        raise BaselineError(f"{file}: not a JSON stamp: {error}") from None
    if not isinstance(stamp, dict):
        raise BaselineError(f"{file}: expected a JSON object of pins")
    for key in (*PIN_KEYS, "parser"):
        if not isinstance(stamp.get(key), str) or not stamp[key]:
            raise BaselineError(f"{file}: field {key!r}: expected a non-empty string, got {stamp.get(key)!r}")
    return stamp


def read_baseline(directory: Path) -> Baseline:
    """Read a baseline directory, checked whole (an absent one is empty): a line per case and outcome, with
    its chunkings, and the pins of the runs it came from."""
    file = outcomes_file(directory)
    if file is None:
        return Baseline(outcomes=pd.DataFrame(columns=COLUMNS), stamp={})
    return Baseline(outcomes=read_outcomes(file), stamp=read_pins(directory / STAMP))


def run_outcomes(run: Run) -> pd.DataFrame:
    """A run's rows as baseline records: labels with the stream checks they break, and readable columns."""
    return pd.DataFrame(
        {
            "case_id": run.rows["case_id"],
            "chunking": run.rows["chunking"],
            "outcome": run_labels(run.rows),
            **{key: run.rows[key] for key in INFO},
        },
        columns=COLUMNS,
    )


def write_baseline(directory: Path, baseline: Baseline) -> None:
    """Write a baseline: a line per case and outcome with its chunkings, sorted by template, mode, origin and
    shape so an accepted change reviews as plain lines; byte-stable; gzip-compressed (outcomes.csv.gz) for a
    profile of COMPRESSED_PROFILES. Both files are written whole before either replaces its old one, so a
    fault (a full disk, a read-only directory) leaves the old baseline as it was: a FileFault."""
    lines = (
        baseline.outcomes.groupby([*INFO, "case_id", "outcome"], sort=True)["chunking"]
        .apply(lambda chunkings: " ".join(sorted(chunkings, key=chunking_key)))
        .rename("chunkings")
        .reset_index()
    )
    text = lines[FILE_COLUMNS].to_csv(index=False, lineterminator="\n").encode("utf-8")
    compressed = baseline.stamp.get("profile") in COMPRESSED_PROFILES
    written, other = (COMPRESSED_OUTCOMES, OUTCOMES) if compressed else (OUTCOMES, COMPRESSED_OUTCOMES)
    data = gzip.compress(text, compresslevel=9, mtime=0) if compressed else text
    try:
        directory.mkdir(parents=True, exist_ok=True)
        remove_stale(directory)
        with replacing(directory / written) as outcomes, replacing(directory / STAMP) as stamp:
            outcomes.write_bytes(data)
            stamp.write_text(json.dumps(baseline.stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (directory / other).unlink(missing_ok=True)
    except OSError as error:
        raise fault(directory, error, "the baseline there is unchanged: free space or make the directory "
                    "writable, then run `gate --update` again") from None


def baseline_stamp(run: Run) -> dict[str, object]:
    """The part of a run's stamp a baseline keeps: its pins and the parser."""
    return {key: run.stamp.get(key) for key in (*PIN_KEYS, "parser")}


def update(baseline: Baseline, run: Run, prune: bool = False) -> Baseline:
    """The baseline with the rows that ran replaced by their new outcomes; rows that did not run are kept, or
    dropped when `prune` (the run covers all the baseline should hold: a corpus change retired them)."""
    fresh = run_outcomes(run)
    ran = pd.MultiIndex.from_frame(fresh[["case_id", "chunking"]])
    kept = baseline.outcomes[~pd.MultiIndex.from_frame(baseline.outcomes[["case_id", "chunking"]]).isin(ran)]
    if prune:
        kept = kept.iloc[0:0]
    return Baseline(outcomes=pd.concat([kept, fresh], ignore_index=True), stamp=baseline_stamp(run))
