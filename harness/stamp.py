"""The run's stamp: what a run was made with, so two runs are comparable or refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.chunkings import RANDOM_PREFIX
from harness.compare import NORMALISATIONS
from harness.export_file import export_identity
from harness.oracle_reads import OracleIdentity
from harness.sweep_config import SweepConfig
from templates.index import INDEX_PATH, index_hash


def template_index_hash() -> str:
    """The sha256 of the committed template index ('' when there is none yet)."""
    return index_hash() if INDEX_PATH.exists() else ""


def make_stamp(
    config: SweepConfig, parser_name: str, parser_revision: str, lost: list[str], rows: dict[str, int]
) -> dict[str, Any]:
    """The stamp of a finished run (no clock, no worker names: identical runs have identical stamps at any -n):
    `parser` is the parser's identity (its name, whatever its path), `parser_spec` how this run started it;
    `chunking_rows` how many rows each chunking made (`rows`), under the rules `chunking_rules` names; the
    oracle is the one the export `--oracle` names, where the run read one."""
    oracle = export_identity(Path(config.oracle_export)) if config.oracle_export else \
        OracleIdentity.of(config.oracle_version)
    profile = config.profile_rules
    return {
        "llama_cpp_commit": oracle.llama_cpp_commit,
        "sdist_sha256": oracle.sdist_sha256,
        "oracle_build": oracle.build_id,
        "llama_cpp_python_version": oracle.version,
        "parser": parser_name,
        "parser_spec": config.parser,
        "parser_revision": parser_revision,
        "expectations": config.expectations,
        "profile": profile.name,
        "profile_limits": dict(profile.limits),
        "profile_only": [list(scope) for scope in profile.only],
        "seeds": sorted(
            int(name[len(RANDOM_PREFIX) :]) for name in profile.chunkings if name.startswith(RANDOM_PREFIX)
        ),
        "template_index_hash": template_index_hash(),
        "chunkings": list(profile.chunkings),
        "chunking_rules": config.chunking_rules,
        "chunking_rows": {name: rows.get(name, 0) for name in profile.chunkings},
        "normalisations": list(NORMALISATIONS),
        "selection": {
            "templates": config.templates,
            "family": config.family,
            "mode": config.mode,
            "corpus": config.corpus,
            "source": config.source,
            "only_failing": config.only_failing,
            **({"oracle_export": config.oracle_export} if config.oracle_export else {}),
        },
        "lost_items": sorted(lost),
    }
