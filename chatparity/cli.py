"""The `chatparity` command: a thin dispatcher to each subcommand's own module."""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
from importlib import metadata
from typing import Any, TextIO

from chatparity.files import FileFault
from chatparity.model import InputError
from chatparity.processes import TERMINATED, interrupt_on_term

COMMANDS = {
    "oracle": ("oracle.commands", "build or describe the llama.cpp oracle"),
    "templates": ("oracle.template_commands", "list the upstream templates and check the index"),
    "corpus": ("corpora.commands", "show the sessions and replies a sweep would run"),
    "protocol-check": ("harness.protocol_check_command", "check a parser program speaks the protocol"),
    "sweep": ("reports.commands.sweep", "run the oracle and a parser over the corpus"),
    "export": ("harness.export_command", "write a profile's cases with llama.cpp's readings, for sweep --oracle"),
    "report": ("reports.commands.report", "write the tables of a run"),
    "diff": ("reports.commands.diff", "compare a base run with a head run"),
    "gate": ("reports.commands.gate", "fail on rows that regressed against a baseline"),
    "coverage": ("reports.commands.coverage", "report template coverage of a run"),
    "show": ("reports.commands.show", "print one case of a run and the command that replays it"),
    "mutate": ("reports.commands.mutate", "check which planted bugs (mutants) of a parser the sweep and gate catch"),
    "multiturn": ("reports.commands.multiturn", "check every prompt is an exact append of the last plus the reply"),
    "peers": ("peers.command", "install peer parsers in environments of their own and build the peer matrix"),
}


EXAMPLES = {
    "oracle": ["chatparity oracle build", "chatparity oracle info --version 0.3.35"],
    "templates": ["chatparity templates list", "chatparity templates check"],
    "corpus": [
        "chatparity corpus --templates 'Qwen-Qwen3-*' --mode 'think/auto'",
        "chatparity corpus --profile full --counts",
    ],
    "protocol-check": [
        "chatparity protocol-check 'node examples/hermes_parser/parser.mjs'",
        "chatparity protocol-check './myparser --json-lines' --templates 'Llama-3.*'",
    ],
    "sweep": [
        "chatparity sweep --profile quick -n 2",
        "chatparity sweep --templates 'Qwen-Qwen3-*' --chunking whole,char --out /tmp/qwen3",
        "chatparity sweep --oracle quick.jsonl   # against an export, without llama.cpp",
        ("chatparity sweep --parser 'cmd:node examples/hermes_parser/parser.mjs' --templates 'Qwen-Qwen3-0.6B.jinja' "
        "--expectations examples/hermes_parser/expectations"),
    ],
    "export": [
        "chatparity export --profile quick --out quick.jsonl",
        "chatparity sweep --oracle quick.jsonl --templates 'Qwen-Qwen3-*'",
    ],
    "report": ["chatparity report reports/runs/quick-reply"],
    "diff": [
        "chatparity diff reports/runs/base reports/runs/head",
        "chatparity diff --git main --templates 'Qwen-*' -n 2",
    ],
    "gate": [
        "chatparity gate reports/runs/quick-reply",
        "chatparity gate --update reports/runs/quick-reply",
    ],
    "coverage": ["chatparity coverage reports/runs/quick-reply"],
    "show": ["chatparity show 0002b7d2b375af10 reports/runs/quick-reply"],
    "mutate": [
        "chatparity mutate --sample 40 --seed 1 --out /tmp/mutate",
        "chatparity mutate --source reply --files 'json_value.py' --list",
        ("chatparity mutate --source examples/hermes_parser --files '*.mjs' --test-command "
         "'chatparity sweep --parser \"cmd:node {dir}/parser.mjs\" --templates {templates} --out {out} "
         "--expectations examples/hermes_parser/expectations'"),
    ],
    "multiturn": ["chatparity multiturn", "chatparity multiturn --templates 'Qwen-*' --parser none --out /tmp/mt"],
    "peers": [
        "chatparity peers --templates 'Qwen-Qwen3-0.6B.jinja' --out /tmp/peers",
        "chatparity peers --peers sglang --reply-run reports/runs/quick-reply -n 2",
    ],
}


def usage() -> str:
    """The top-level help text."""
    lines = ["usage: chatparity [--version] COMMAND [ARGS]   (chatparity COMMAND --help for a command's flags)"]
    lines += ["", "commands:"]
    width = max(len(name) for name in COMMANDS)
    lines += [f"  {name:<{width}} {about}" for name, (_, about) in COMMANDS.items()]
    lines += ["", "examples:", "  chatparity sweep --profile quick -n 2", "  chatparity show CASE_ID"]
    return "\n".join(lines)


def version() -> str:
    """The installed version and the pinned oracle (described by the oracle command, loaded by name)."""
    try:
        installed = metadata.version("chatparity")
    except metadata.PackageNotFoundError:
        installed = "(not installed)"
    return f"chatparity {installed}; oracle: {importlib.import_module('oracle.commands').pinned()}"


def examples(name: str) -> str:
    """A command's examples, printed after its --help."""
    return "\n".join(["", "examples:", *(f"  {line}" for line in EXAMPLES.get(name, []))])


def user_errors() -> tuple[type[Exception], ...]:
    """The exceptions that mean the input or the environment was wrong (printed as one line, exit 2), not a bug:
    a file the command cannot write or read is named with the cause and the remedy."""
    return (InputError, FileFault)


def run(name: str, rest: list[str]) -> int:
    """Run one subcommand; its --help ends with examples, and a wrong input is one line on stderr."""
    module = importlib.import_module(COMMANDS[name][0])
    prog = f"chatparity {name}"
    try:
        return int(module.main(rest, prog=prog) or 0)
    except SystemExit as exit:
        if exit.code == 0 and {"-h", "--help"} & set(rest):
            print(examples(name))
        raise
    except Exception as error:
        if not isinstance(error, user_errors()):
            raise
        print(f"{prog}: {error}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """Run the subcommand named by the first argument."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(usage())
        return 0
    if args[0] == "--version":
        print(version())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"chatparity: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    return run(name, rest)


class QuietPipe:
    """The console command's stdout: once the reader of its pipe has gone (`| head`), what is left to print goes
    to /dev/null and the command carries on, its files written and its exit status its own."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Print, or drop the text when no one reads it any more."""
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self.silence()
            return len(text)

    def flush(self) -> None:
        """Flush, or drop what is buffered when no one reads it any more."""
        try:
            self.stream.flush()
        except BrokenPipeError:
            self.silence()

    def silence(self) -> None:
        """Send stdout to /dev/null (the buffered text goes there too)."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        """Everything else as the stream has it."""
        return getattr(self.stream, name)


def entry() -> None:
    """The console command: `main`, leaving with its status (128 + the signal's number after SIGTERM, once its
    cleanups ran: SIGTERM is taken as an interruption and passed on to its children). Its stdout may be a pipe
    closed early. Everything left is frozen first, so the interpreter's last garbage collection does not walk
    what the command built (its files are closed by then; the objects are still freed as their references
    drop)."""
    interrupt_on_term(forward=True)
    sys.stdout = QuietPipe(sys.stdout)  # type: ignore[assignment]
    try:
        status = main()
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT
    if TERMINATED:
        status = 128 + TERMINATED[0]
    sys.stdout.flush()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    entry()
