"""`chatparity templates`: list the indexed upstream templates, check the index against a pin, rebuild it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabulate import tabulate

from oracle.client import Oracle
from oracle.index_build import build_index
from templates.check import check_templates
from templates.index import INDEX_PATH, TemplateEntry, dumps_index, load_index, templates_dir


def parser(prog: str) -> argparse.ArgumentParser:
    """The argument parser of `chatparity templates`."""
    top = argparse.ArgumentParser(prog=prog, description="The upstream chat templates and their index.")
    commands = top.add_subparsers(dest="command")
    for name, about in [
        ("list", "list the templates with family, syntax and kwargs (the default)"),
        ("check", "compare the upstream templates at a pin with the index; exit 1 on any difference"),
        ("rebuild", "rebuild templates/index.json from the upstream templates and the oracle"),
    ]:
        command = commands.add_parser(name, help=about, description=about)
        command.add_argument("--version", help="llama-cpp-python version (default: the pinned default)")
        if name != "list":
            command.add_argument(
                "--dir", type=Path, help="an upstream templates directory (default: the pin's)"
            )
        if name == "rebuild":
            command.add_argument("--output", type=Path, default=INDEX_PATH, help="where to write the index")
    return top


def kwargs_text(entry: TemplateEntry) -> str:
    """An entry's kwargs as `name=v1|v2` pairs."""
    return ", ".join(f"{name}={'|'.join(str(value) for value in values)}" for name, values in entry.kwargs)


def list_templates() -> int:
    """Print the index as a table."""
    rows = [
        (
            entry.name,
            entry.family,
            entry.syntax,
            kwargs_text(entry),
            f"{entry.think_start} … {entry.think_end}" if entry.think_start else "",
            "yes" if entry.writes_calls else "no",
            entry.vocab + ("" if entry.vocab_exact else " (nearest)"),
            " ".join(entry.split_markers),
        )
        for entry in load_index().values()
    ]
    headers = ["template", "family", "syntax", "kwargs", "thinking", "writes calls", "vocab", "split markers"]
    print(tabulate(rows, headers=headers))
    split = sum(1 for row in rows if row[-1])
    print(f"\n{len(rows)} templates; {split} write markers that are more than one token in their vocab")
    return 0


def check(directory: Path) -> int:
    """Print what differs between the upstream set and the index; 1 when anything does."""
    report = check_templates(load_index(), directory)
    for line in report.lines():
        print(line)
    if report.ok:
        print(f"index matches the {len(load_index())} templates in {directory}")
        return 0
    print(
        "the index does not match upstream: review the changes, then run `chatparity templates rebuild`",
        file=sys.stderr,
    )
    return 1


def rebuild(directory: Path, version: str | None, output: Path) -> int:
    """Rebuild the index with jinja2 and the oracle, write it and print how it differs from the committed one."""
    before = load_index()
    with Oracle(version=version) as oracle:
        entries = build_index(directory, oracle)
    output.write_text(dumps_index(entries), encoding="utf-8")
    after = {entry.name: entry for entry in entries}
    print(f"wrote {output}: {len(entries)} templates")
    for label, names in [
        ("added", sorted(set(after) - set(before))),
        ("removed", sorted(set(before) - set(after))),
        ("changed", sorted(name for name in set(before) & set(after) if before[name] != after[name])),
    ]:
        print(f"{label} against the committed index: {', '.join(names) or 'none'}")
    return 0


def main(argv: list[str], prog: str = "chatparity templates") -> int:
    """Run `chatparity templates [list|check|rebuild]`."""
    args = parser(prog).parse_args(argv)
    if args.command in (None, "list"):
        return list_templates()
    directory = args.dir or templates_dir(args.version)
    if args.command == "check":
        return check(directory)
    return rebuild(directory, args.version, args.output)
