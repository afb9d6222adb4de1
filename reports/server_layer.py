"""llama-server's own layer: where a `--parser llama-server` run departs from llama.cpp's chat code (the oracle) by
a rule of the server (its policies, `harness/server_expectations/policies.toml`), one entry per policy × llama.cpp
parser (the format's syntax), each shown by a case with its requests, the reply and both answers."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pandas as pd

from harness.policies import Policy
from reports.expectations import expectations_of
from reports.runs import Run, chunking_key, read_rows

SERVER_PARSER = "llama-server"
READ = ["case_id", "chunking", "session_id", "template", "family", "syntax", "mode", "shape", "reply", "partial",
        "explained", "oracle_reading", "parser_reading"]
LAYER_COLUMNS = ["id", "policy", "reason", "documented", "family", "syntax", "cases", "templates", "template_names",
                 "chunkings", "case_id", "session_id", "template", "mode", "shape", "chunking", "reply", "oracle",
                 "server"]
"""An entry's columns: which policy, where, how many, and its representative case."""


def server_policies(run: Run) -> dict[str, Policy]:
    """The policies of a llama-server run's expectations by name (none for another parser's run)."""
    if not run.parser_spec.startswith(SERVER_PARSER):
        return {}
    return {policy.name: policy for policy in expectations_of(run.stamp).policies.policies}


def server_layer(run: Run) -> pd.DataFrame:
    """The run's server-layer entries, most templates and cases first, numbered L1, L2, …"""
    policies = server_policies(run)
    if not policies:
        return pd.DataFrame(columns=LAYER_COLUMNS)
    rows = read_rows(run, READ, "explained != ''")
    findings = []
    for row in rows.to_dict("records"):
        for name in str(row["explained"]).split("+"):
            if name in policies:
                findings.append({**row, "policy": name})
    if not findings:
        return pd.DataFrame(columns=LAYER_COLUMNS)
    entries = [entry(group, policies[policy]) for (policy, _), group in
               pd.DataFrame(findings).groupby(["policy", "syntax"], sort=True)]
    table = pd.DataFrame(entries).sort_values(["templates", "cases", "policy", "syntax"],
                                              ascending=[False, False, True, True], kind="stable")
    table["id"] = [f"L{number}" for number in range(1, len(table) + 1)]
    return table[LAYER_COLUMNS].reset_index(drop=True)


def entry(group: pd.DataFrame, policy: Policy) -> dict[str, Any]:
    """One policy × syntax entry: its counts and the case it is shown by (of its most common template and shape,
    the shortest reply, its first chunking)."""
    templates, shapes = Counter(group["template"]), Counter(group["shape"])
    shown = group.assign(
        _template=[-templates[name] for name in group["template"]],
        _shape=[-shapes[name] for name in group["shape"]],
        _length=[len(reply) for reply in group["reply"]],
        _chunking=[chunking_key(chunking) for chunking in group["chunking"]],
    ).sort_values(["_template", "template", "_shape", "shape", "_length", "case_id", "_chunking"],
                  kind="stable").iloc[0]
    return {
        "policy": policy.name, "reason": policy.reason, "documented": policy.documented,
        "family": ", ".join(sorted(set(group["family"]), key=lambda family: (family != shown["family"], family))),
        "syntax": shown["syntax"], "cases": group["case_id"].nunique(), "templates": group["template"].nunique(),
        "template_names": ", ".join(sorted(set(group["template"]))),
        "chunkings": ", ".join(sorted(set(group["chunking"]), key=chunking_key)),
        **{name: shown[name] for name in ("case_id", "session_id", "template", "mode", "shape", "chunking", "reply")},
        "oracle": json.loads(shown["oracle_reading"]) if shown["oracle_reading"] else None,
        "server": json.loads(shown["parser_reading"]) if shown["parser_reading"] else None,
    }
