"""The mutation check of a parser: each mutant swept in a temporary copy of the parser's source and gated
against a baseline of the unmutated parser; killed, survived and equivalent mutants with their diffs."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd

from harness.mutants import (
    SYNTAX_DIRECTORY,
    Mutant,
    copy_environment,
    enclosing_function,
    equivalent_by_bytecode,
    mutants_of,
)
from harness.sweep_trace import IMPORT, read_trace
from reports.baselines import Baseline, baseline_stamp, run_outcomes, write_baseline
from reports.built_alike import REASON as BUILT_ALIKE
from reports.built_alike import built_alike
from reports.diff import Change
from reports.divergences import Verdict, classify_run
from reports.gate import check
from reports.runs import RunError, load_run
from reports.tables import markdown_table
from templates.index import load_index

PROJECT_ROOT = Path(__file__).resolve().parent.parent
REPORT_JSON = "mutants.json"
REPORT_MD = "mutants.md"
SHOWN_ROWS = 3
SWEEP_START_SECONDS = 8.0
SLOWDOWN = 5.0
MIN_SWEEP_SECONDS = 60.0
WHOLE = "whole"
FOLLOW_UP = "whole,char3"


class MutationError(Exception):
    """A mutation check that cannot run as asked."""


class Status(str, Enum):
    """What became of a mutant."""

    KILLED = "killed"
    SURVIVED = "survived"
    EQUIVALENT = "equivalent"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class Settings:
    """How mutants are checked: the source copied per mutant, the sweep and gate or a test command."""

    source: Path
    out: Path
    parser: str = "reply"
    profile: str = "quick"
    templates: str | None = None
    mode: str | None = None
    oracle_cache: str | None = None
    test_command: str | None = None
    timeout: float = 1800.0
    jobs: int = 2
    project: Path = PROJECT_ROOT
    max_templates: int | None = None


@dataclass(frozen=True)
class Sweep:
    """One sweep of a mutant: the `--templates` globs (None: every template) and the chunking (None: the
    profile's)."""

    templates: str | None
    chunking: str | None = None

    @property
    def label(self) -> str:
        """The templates as the report shows them, with the chunking when it is not the profile's."""
        return (self.templates or "*") + (f" ({self.chunking})" if self.chunking else "")


@dataclass(frozen=True)
class Result:
    """A checked mutant: its status, why, the templates its sweep ran and its diff."""

    id: str
    label: str
    status: Status
    reason: str
    templates: str
    seconds: float
    diff: str = field(repr=False)


def source_files(source: Path, pattern: str) -> list[Path]:
    """The files of the source that mutants are made of, in path order."""
    files = sorted(
        path for path in source.rglob(pattern) if path.is_file() and "__pycache__" not in path.parts
    )
    if not files:
        raise MutationError(f"{source}: no file matches {pattern!r}")
    return files


def all_mutants(source: Path, pattern: str) -> list[Mutant]:
    """Every mutant of every matching file."""
    return [mutant for file in source_files(source, pattern) for mutant in mutants_of(source, file)]


def sample(mutants: Sequence[Mutant], size: int | None, seed: int) -> list[Mutant]:
    """`size` mutants drawn with a seeded generator (all when size is None), in file and line order."""
    if size is None or size >= len(mutants):
        return list(mutants)
    drawn = random.Random(seed).sample(range(len(mutants)), size)
    return [mutants[index] for index in sorted(drawn)]


def in_syntax_module(mutant: Mutant) -> bool:
    """Whether the mutant lies in a module under syntaxes/."""
    parts = Path(mutant.file).parts
    return len(parts) >= 2 and parts[-2] == SYNTAX_DIRECTORY


def served_templates(mutant: Mutant, syntaxes: dict[str, list[str]]) -> list[str] | None:
    """The templates a mutant's code serves: those of the syntax a module under syntaxes/ is named after,
    or None (every template) for the rest of the parser."""
    if in_syntax_module(mutant):
        return syntaxes.get(Path(mutant.file).stem)
    return None


def reached(
    mutant: Mutant, selection: str | None, trace: dict[str, dict[int, set[str]]], given: str | None
) -> str | None:
    """The templates a mutant's change can reach: those its code serves and, for a syntax module, every
    template whose reading runs one of the module's functions (choosing a template's syntax runs the detect of
    each syntax tried before it), that the user's globs keep."""
    if selection is None or not in_syntax_module(mutant):
        return selection
    callers = set().union(*trace.get(mutant.file, {}).values()) - {IMPORT}
    return template_selection(sorted(set(filter(None, selection.split(","))) | callers), given)


def index_syntaxes() -> dict[str, list[str]]:
    """Template names by the reply syntax the index records for them."""
    found: dict[str, list[str]] = {}
    for name, entry in sorted(load_index().items()):
        found.setdefault(entry.syntax, []).append(name)
    return found


def template_selection(served: list[str] | None, given: str | None) -> str | None:
    """The `--templates` globs of a mutant's sweep: the served templates that the user's globs keep."""
    if served is None:
        return given
    if given is None:
        return ",".join(served)
    kept = [name for name in served if any(fnmatch(name, glob) for glob in given.split(","))]
    return ",".join(kept) if kept else ""


def equivalents_file(path: Path | None) -> dict[str, str]:
    """Mutants known to be equivalent, by id, with the reason: `[[equivalent]] id = "…" reason = "…"`."""
    if path is None:
        return {}
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", [])
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise MutationError(f"{path}: {error}") from None
    known: dict[str, str] = {}
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry.get("reason"):
            raise MutationError(f"{path}: equivalent #{number}: needs an id and a reason")
        known[entry["id"]] = str(entry["reason"])
    return known


def sweep_argv(
    settings: Settings, out: Path, templates: str | None, workers: int = 0, chunking: str | None = None
) -> list[str]:
    """The sweep command of one run, with the project's chatparity (a chunking given runs where the profile
    runs it, so its rows are among the reference's)."""
    argv = [
        sys.executable,
        "-m",
        "chatparity",
        "sweep",
        "--parser",
        settings.parser,
        "--profile",
        settings.profile,
        "-n",
        str(workers),
        "--out",
        str(out),
    ]
    for flag, value in (
        ("--templates", templates),
        ("--mode", settings.mode),
        ("--oracle-cache", settings.oracle_cache),
        ("--chunking", chunking),
    ):
        if value:
            argv += [flag, value]
    return argv + (["--keep-profile-rules"] if chunking else [])


def snapshot_project(destination: Path) -> Path:
    """A copy of the project (without git, runs and caches) that every sweep of a check runs from, so edits
    made to the working tree meanwhile do not change the rows between the reference and a mutant."""
    ignored = shutil.ignore_patterns(
        ".git", "runs", "__pycache__", "*.egg-info", ".pytest_cache", "node_modules"
    )
    return Path(shutil.copytree(PROJECT_ROOT, destination, ignore=ignored))


def run_command(
    argv: list[str] | str, env: dict[str, str], timeout: float, log: Path, cwd: Path
) -> int | None:
    """Run a command from `cwd`, its output in `log`; its exit status, or None on a timeout (the command and
    its children are killed then, and when this process is interrupted)."""
    with log.open("w", encoding="utf-8") as output:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            shell=isinstance(argv, str),
            start_new_session=True,
        )
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            return None
        except BaseException:
            os.killpg(process.pid, 9)
            raise


@dataclass(frozen=True)
class Reference:
    """The unmutated parser's sweep: its outcomes as a baseline, and its rows that are already unexpected
    matches (a mutant is not blamed for those)."""

    baseline: Baseline
    unexpected: frozenset[tuple[str, str]]
    seconds_per_template: float = 0.0
    templates: int = 0
    follow_up_share: float = 1.0
    trace: dict[str, dict[int, set[str]]] = field(default_factory=dict)


def unexpected_keys(verdict: Verdict) -> frozenset[tuple[str, str]]:
    """The (case, chunking) keys of a verdict's unexpected matches."""
    rows = verdict.unexpected
    return frozenset(zip(rows["case_id"], rows["chunking"]))


def reference(settings: Settings, templates: str | None) -> Reference:
    """Sweep the unmutated parser (the source, imported first, on `settings.jobs` workers) and keep its
    outcomes, also written to OUT/baseline, as the baseline every mutant is gated against; then trace which
    templates' sessions call each function of the source in a sweep of whole reads (OUT/trace.json)."""
    out = settings.out / "reference"
    started = time.monotonic()
    status = run_command(
        sweep_argv(settings, out, templates, settings.jobs),
        copy_environment(settings.source.parent, settings.project),
        settings.timeout,
        settings.out / "reference.log",
        settings.project,
    )
    seconds = time.monotonic() - started
    if status is None or not (out / "rows.sqlite").is_file():
        raise MutationError(f"the sweep of the unmutated parser failed: see {settings.out / 'reference.log'}")
    run = load_run(out)
    baseline = Baseline(outcomes=run_outcomes(run), stamp=baseline_stamp(run))
    write_baseline(settings.out / "baseline", baseline)
    swept = max(1, int(run.rows["template"].nunique()))
    return Reference(
        baseline,
        unexpected_keys(classify_run(run)),
        seconds * max(1, settings.jobs) / swept,
        swept,
        float(run.rows["chunking"].isin(FOLLOW_UP.split(",")).mean()) if len(run.rows) else 1.0,
        traced_calls(settings, templates),
    )


def traced_calls(settings: Settings, templates: str | None) -> dict[str, dict[int, set[str]]]:
    """Which templates' sessions call each function of the unmutated source, from a sweep of its whole reads
    in one traced process (harness.sweep_trace)."""
    file = settings.out / "trace.json"
    argv = [sys.executable, "-m", "harness.sweep_trace", str(settings.source), str(file)]
    argv += sweep_argv(settings, settings.out / "trace-run", templates, chunking=WHOLE)[3:]
    status = run_command(
        argv,
        copy_environment(settings.source.parent, settings.project),
        settings.timeout,
        settings.out / "trace.log",
        settings.project,
    )
    if status is None or not file.is_file():
        raise MutationError(f"the traced sweep of the unmutated parser failed: see {settings.out / 'trace.log'}")
    return read_trace(file)


def spread(names: list[str], limit: int, salt: str, syntax_of: dict[str, str]) -> list[str]:
    """`limit` of the names, as many syntaxes as possible, drawn by a hash of `salt` (stable per mutant)."""

    def rank(text: str) -> str:
        return hashlib.sha256(f"{salt}\0{text}".encode()).hexdigest()

    by_syntax: dict[str, list[str]] = {}
    for name in sorted(names, key=rank):
        by_syntax.setdefault(syntax_of.get(name, ""), []).append(name)
    queues = [by_syntax[syntax] for syntax in sorted(by_syntax, key=rank)]
    picked: list[str] = []
    while len(picked) < limit:
        picked += [queue.pop(0) for queue in queues if queue][: limit - len(picked)]
    return sorted(picked)


def narrowed(
    mutant: Mutant,
    selection: str | None,
    trace: dict[str, dict[int, set[str]]],
    settings: Settings,
    syntax_of: dict[str, str],
) -> str | None:
    """The templates a mutant is swept over: those its code serves whose sessions call the function holding it
    (all it serves when no traced session did, or when it lies outside a function), at most
    `settings.max_templates` of them, spread over syntaxes."""
    globs = None if selection is None else selection.split(",")
    names = [name for name in sorted(syntax_of) if globs is None or any(fnmatch(name, glob) for glob in globs)]
    function = enclosing_function((settings.source / mutant.file).read_text(encoding="utf-8"), mutant.line)
    ran = trace.get(mutant.file, {}).get(function, set()) - {IMPORT} if function is not None else set()
    chosen = [name for name in names if name in ran] or names
    if settings.max_templates and len(chosen) > settings.max_templates:
        chosen = spread(chosen, settings.max_templates, mutant.id, syntax_of)
    return None if selection is None and chosen == names else ",".join(chosen)


def sweeps_of(
    mutant: Mutant,
    selection: str | None,
    trace: dict[str, dict[int, set[str]]],
    settings: Settings,
    syntax_of: dict[str, str],
) -> list[Sweep]:
    """A mutant's sweeps: at every chunking over the templates `narrowed` picks; then, when --max-templates
    left some out, the whole reads and 3-character streams of every template whose sessions run its function (a
    change that alters a few templates' reading or streaming is caught there, whichever few the cap picked)."""
    capped = narrowed(mutant, selection, trace, settings, syntax_of)
    every = narrowed(mutant, selection, trace, replace(settings, max_templates=None), syntax_of)
    return [Sweep(capped)] if every == capped else [Sweep(capped), Sweep(every, FOLLOW_UP)]


def templates_of(sweep: Sweep, reference: Reference) -> int:
    """How many templates a sweep runs."""
    return reference.templates if sweep.templates is None else len(sweep.templates.split(","))


def expected_seconds(sweep: Sweep, reference: Reference) -> float:
    """How long one sweep of the unmutated parser over the sweep's templates takes, from the reference sweep's
    time per template and the share of its rows the follow-up chunkings take."""
    count = templates_of(sweep, reference)
    share = reference.follow_up_share if sweep.chunking else 1.0
    return SWEEP_START_SECONDS + reference.seconds_per_template * count * share


def sweep_limit(sweep: Sweep, reference: Reference, settings: Settings) -> float:
    """The seconds a mutant's sweep may take before it is ended as a timeout: SLOWDOWN times the unmutated
    parser's (at least MIN_SWEEP_SECONDS), never more than the check's `--timeout`."""
    return min(settings.timeout, max(MIN_SWEEP_SECONDS, SLOWDOWN * expected_seconds(sweep, reference)))


def estimate(plans: list[list[Sweep]], reference: Reference, settings: Settings) -> str:
    """How long the mutants' sweeps should take (the most a mutant takes when no sweep kills it)."""

    seconds = sum(expected_seconds(sweep, reference) for sweeps in plans for sweep in sweeps)
    minutes = seconds / max(1, settings.jobs) / 60
    streamed = [templates_of(sweeps[0], reference) for sweeps in plans]
    mean = sum(streamed) / len(streamed) if streamed else 0.0
    whole = sum(1 for sweeps in plans if len(sweeps) > 1)
    return (
        f"estimate: {len(plans)} mutants to sweep over {mean:.1f} templates each"
        + (f" ({whole} of them then read whole and at char3 over every template running their function)"
           if whole else "")
        + f", {reference.seconds_per_template:.1f}s per template: about {minutes:.0f} minutes on "
        f"{settings.jobs} jobs"
    )


def verdict_of(reference: Reference, run_dir: Path) -> tuple[str, str]:
    """Why the gate fails a mutant's run ('' when it passes): regressions, failing new rows, lost items or
    unexpected matches, with the first rows; and, when it passes, whether any row changed at all."""
    try:
        run = load_run(run_dir)
    except RunError as error:
        return f"no run: {error}", ""
    verdict = classify_run(run)
    result = check(reference.baseline, run, verdict)
    unexpected = verdict.unexpected[
        [
            key not in reference.unexpected
            for key in zip(verdict.unexpected["case_id"], verdict.unexpected["chunking"])
        ]
    ]
    changed = result.rows[result.rows["change"].isin([Change.FIX.value, Change.KIND_CHANGE.value])]
    note = (
        f"{len(changed)} rows changed without failing the gate (fixes or kind changes), e.g. "
        + "; ".join(
            f"{row.template} {row.shape} {row.chunking}: {row.base} -> {row.head}"
            for row in changed.head(2).itertuples()
        )
        if not changed.empty
        else "every row as in the reference sweep"
    )
    reasons = []
    for what, rows in (
        ("regressions", result.judgement.regressions),
        ("new failing rows", result.judgement.new_failures),
        ("regressions (rows now declined)", result.judgement.declined),
        ("unexpected matches", unexpected),
    ):
        if not rows.empty:
            shown = "; ".join(
                f"{row.template} {row.shape} {row.chunking}: {row.head if hasattr(row, 'head') else row.status}"
                + (f" [{str(row.detail)[:160]}]" if getattr(row, "detail", "") else "")
                for row in rows.head(SHOWN_ROWS).itertuples()
            )
            reasons.append(f"{len(rows)} {what} ({shown})")
    if result.judgement.lost:
        reasons.append(f"{len(result.judgement.lost)} sweep items lost ({result.judgement.lost[0]})")
    if not result.checked:
        total = len(reference.baseline.outcomes)
        reasons.append(f"nothing checked: the run holds none of the reference's {total} rows")
    return "; ".join(reasons), note


def check_mutant(mutant: Mutant, settings: Settings, reference: Reference | None, sweeps: list[Sweep]) -> Result:
    """Apply one mutant to a temporary copy of the source and sweep and gate it, sweep after sweep until a gate
    fails (or run the test command over the first sweep's templates)."""
    started = time.monotonic()
    limit = settings.timeout
    original = (settings.source / mutant.file).read_text(encoding="utf-8")
    diff = mutant.diff(original)
    with tempfile.TemporaryDirectory(prefix=f"chatparity-mutant-{mutant.id}-") as temporary:
        root = Path(temporary)
        copy = root / settings.source.name
        shutil.copytree(settings.source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        (copy / mutant.file).write_text(mutant.apply(original), encoding="utf-8")
        out = root / "run"
        log = settings.out / "logs" / f"{mutant.id}.log"
        served = sweeps[0].templates
        if settings.test_command:
            command = settings.test_command.format(
                dir=shlex.quote(str(copy)), out=shlex.quote(str(out)), templates=shlex.quote(served or "*")
            )
            environment = copy_environment(copy.parent, settings.project)
            status = run_command(command, environment, settings.timeout, log, settings.project)
            reason, note = (
                ("", "the test command passed") if status == 0 else (f"the test command exited {status}", "")
            )
        else:
            assert reference is not None
            for number, sweep in enumerate(sweeps):
                out = root / f"run{number}"
                limit = sweep_limit(sweep, reference, settings)
                status = run_command(
                    sweep_argv(settings, out, sweep.templates, chunking=sweep.chunking),
                    copy_environment(root, settings.project),
                    limit,
                    log.with_name(f"{mutant.id}.{number}.log") if number else log,
                    settings.project,
                )
                reason, note = verdict_of(reference, out) if status is not None else ("", "")
                if status is None or reason:
                    break
            served = sweep.label
    seconds = time.monotonic() - started
    if status is None:
        return Result(
            mutant.id,
            mutant.label,
            Status.TIMEOUT,
            f"no verdict within {limit:.0f}s",
            served or "*",
            seconds,
            diff,
        )
    found = Status.KILLED if reason else Status.SURVIVED
    return Result(mutant.id, mutant.label, found, reason or note, served or "*", seconds, diff)


def mutation_check(
    mutants: Sequence[Mutant],
    settings: Settings,
    equivalents: dict[str, str],
    progress: Callable[[Result], None] = lambda result: None,
    notify: Callable[[str], None] = lambda line: None,
) -> list[Result]:
    """Check every mutant on `settings.jobs` workers; equivalent ones (known, or the same bytecode) are not run,
    and a survivor of the project's reply package that builds every reader as before is equivalent
    (`built_alike`). `notify` hears the estimate of the run's time once the reference sweep is done."""
    settings.out.mkdir(parents=True, exist_ok=True)
    (settings.out / "logs").mkdir(exist_ok=True)
    syntaxes = index_syntaxes()
    served = {
        mutant.id: template_selection(served_templates(mutant, syntaxes), settings.templates)
        for mutant in mutants
    }
    results: dict[str, Result] = {}
    to_run: list[Mutant] = []
    for mutant in mutants:
        source = (settings.source / mutant.file).read_text(encoding="utf-8")
        reason = equivalents.get(mutant.id) or (
            "compiles to the same bytecode" if equivalent_by_bytecode(mutant, source) else ""
        )
        if reason:
            results[mutant.id] = Result(
                mutant.id, mutant.label, Status.EQUIVALENT, reason, "", 0.0, mutant.diff(source)
            )
        elif served[mutant.id] == "":
            results[mutant.id] = Result(
                mutant.id,
                mutant.label,
                Status.SURVIVED,
                "its code serves no selected template",
                "",
                0.0,
                mutant.diff(source),
            )
        else:
            to_run.append(mutant)
    swept: Reference | None = None
    chosen = {mutant.id: [Sweep(served[mutant.id])] for mutant in to_run}
    if not settings.test_command and to_run:
        needed = {served[mutant.id] for mutant in to_run}
        detected_elsewhere = any(in_syntax_module(mutant) for mutant in to_run)
        union = settings.templates if None in needed or detected_elsewhere else ",".join(
            sorted({name for selection in needed if selection for name in selection.split(",")})
        )
        swept = reference(settings, union)
        syntax_of = {name: syntax for syntax, names in syntaxes.items() for name in names}
        chosen = {
            mutant.id: sweeps_of(
                mutant, reached(mutant, served[mutant.id], swept.trace, settings.templates), swept.trace, settings,
                syntax_of,
            )
            for mutant in to_run
        }
        notify(estimate([chosen[mutant.id] for mutant in to_run], swept, settings))
    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        for result in pool.map(
            lambda mutant: check_mutant(mutant, settings, swept, chosen[mutant.id]), to_run
        ):
            results[result.id] = result
            progress(result)
    survivors = [mutant for mutant in to_run if results[mutant.id].status is Status.SURVIVED]
    if survivors and reads_as_reply(settings):
        checked = settings.templates or "*"
        for mutant_id in built_alike(survivors, settings.source, settings.project, settings.jobs, checked):
            results[mutant_id] = replace(results[mutant_id], status=Status.EQUIVALENT, reason=BUILT_ALIKE)
            progress(results[mutant_id])
    return [results[mutant.id] for mutant in mutants]


def reads_as_reply(settings: Settings) -> bool:
    """Whether the check is of the project's reply package swept as the project parser (whose readers
    `built_alike` can describe)."""
    return settings.parser == "reply" and settings.source.name == "reply" and not settings.test_command


def score(results: Sequence[Result]) -> dict[str, float | int]:
    """Counts per status and the mutation score: killed (timeouts included) over non-equivalent mutants."""
    counts = Counter(result.status.value for result in results)
    judged = len(results) - counts[Status.EQUIVALENT.value]
    killed = counts[Status.KILLED.value] + counts[Status.TIMEOUT.value]
    return {
        "mutants": len(results),
        **{status.value: counts[status.value] for status in Status},
        "score": round(100.0 * killed / judged, 1) if judged else 100.0,
    }


def write_report(
    results: Sequence[Result], settings: Settings, header: dict[str, object]
) -> tuple[Path, Path]:
    """mutants.json (every mutant) and mutants.md (the score, every mutant in a table, survivors' diffs)."""
    totals = score(results)
    data = {
        **header,
        "totals": totals,
        "mutants": [asdict(result) | {"status": result.status.value} for result in results],
    }
    json_path, md_path = settings.out / REPORT_JSON, settings.out / REPORT_MD
    json_path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    table = pd.DataFrame(
        [
            {
                "id": r.id,
                "mutant": r.label,
                "status": r.status.value,
                "templates": r.templates[:40],
                "why": r.reason[:200],
            }
            for r in results
        ],
        columns=["id", "mutant", "status", "templates", "why"],
    )
    parts = [
        "# Mutation check",
        "",
        f"Source `{settings.source}`, parser `{settings.parser}`, profile `{settings.profile}`"
        + (f", test command `{settings.test_command}`" if settings.test_command else ""),
        "",
        markdown_table(pd.DataFrame([totals])),
        "",
        markdown_table(table),
        "",
    ]
    for status in (Status.SURVIVED, Status.EQUIVALENT):
        chosen = [result for result in results if result.status is status]
        if chosen:
            parts += [f"## {status.value.capitalize()} mutants ({len(chosen)})", ""]
            for result in chosen:
                parts += [
                    f"### {result.id} {result.label}",
                    "",
                    result.reason or "(the gate passed)",
                    "",
                    "```diff",
                    result.diff.rstrip("\n"),
                    "```",
                    "",
                ]
    md_path.write_text("\n".join(parts), encoding="utf-8")
    return json_path, md_path
