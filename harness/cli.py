"""The `chatparity` command: a thin dispatcher to each subcommand's own module."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "oracle": ("oracle.commands", "build or describe the llama.cpp oracle"),
    "templates": ("templates.commands", "list the upstream templates and check the index"),
    "corpus": ("corpora.commands", "show the sessions and replies a sweep would run"),
    "sweep": ("harness.sweep_command", "run the oracle and a parser over the corpus"),
    "report": ("reports.commands.report", "write the tables of a run"),
    "diff": ("reports.commands.diff", "compare a base run with a head run"),
    "gate": ("reports.commands.gate", "fail on rows that regressed against a baseline"),
    "coverage": ("reports.commands.coverage", "report template coverage of a run"),
}


def usage() -> str:
    """The top-level help text."""
    lines = ["usage: chatparity COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<10} {about}" for name, (_, about) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the subcommand named by the first argument."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"chatparity: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest, prog=f"chatparity {name}") or 0)


if __name__ == "__main__":
    sys.exit(main())
