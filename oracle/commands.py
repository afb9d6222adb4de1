"""`chatparity oracle`: build the llama.cpp oracle, describe it, render one template with it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chatparity.model import PINNED_NOW
from oracle.build import BuildError, binary_path, ensure_binary
from oracle.client import Oracle, OracleError
from templates.pins import DEFAULT_VERSION, PinError, pin_of, resolve_version
from templates.upstream import SourceError, ensure_source

DEMO_MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
DEMO_TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city name."}},
            "required": ["city"],
        },
    },
}]


def parser(prog: str) -> argparse.ArgumentParser:
    """The argument parser of `chatparity oracle`."""
    top = argparse.ArgumentParser(prog=prog, description="Build or describe the llama.cpp oracle.")
    commands = top.add_subparsers(dest="command", required=True)
    for name, about in [("build", "fetch the pinned llama.cpp source and build the oracle"),
                        ("info", "print the oracle's llama.cpp commit, llama-cpp-python version and build id")]:
        command = commands.add_parser(name, help=about, description=about)
        command.add_argument("--version", help="llama-cpp-python version (default: the pinned default)")
    render = commands.add_parser("render", help="render one template with the oracle",
                                 description="Render a one-question conversation with one template.")
    render.add_argument("--version", help="llama-cpp-python version (default: the pinned default)")
    render.add_argument("--template", required=True,
                        help="a template file, or the name of an upstream template (e.g. Qwen-Qwen3-0.6B.jinja)")
    render.add_argument("--bos", default="", help="the BOS token text")
    render.add_argument("--eos", default="", help="the EOS token text")
    render.add_argument("--tools", action="store_true", help="offer a get_weather tool")
    render.add_argument("--no-thinking", action="store_true", help="render with enable_thinking false")
    return top


def template_path(name: str, version: str) -> Path:
    """A template file given as a path, or by name among the upstream templates of a version."""
    path = Path(name)
    if path.is_file():
        return path
    upstream = ensure_source(version) / "models" / "templates" / name
    if upstream.is_file():
        return upstream
    raise FileNotFoundError(f"no template file {name!r}, neither as a path nor in {upstream.parent}")


def render_demo(oracle: Oracle, template: Path, args: argparse.Namespace) -> str:
    """The render of the demo conversation with one template, as readable text."""
    rendered = oracle.render({
        "template": template.read_text(encoding="utf-8"),
        "bos": args.bos,
        "eos": args.eos,
        "messages": DEMO_MESSAGES,
        "tools": DEMO_TOOLS if args.tools else [],
        "enable_thinking": not args.no_thinking,
        "now": PINNED_NOW,
    })
    lines = [
        f"template: {template.name}",
        f"format: {rendered.format}",
        f"generation_prompt: {json.dumps(rendered.generation_prompt, ensure_ascii=False)}",
        (f"supports_thinking: {rendered.supports_thinking} "
         f"({rendered.thinking_start_tag!r} ... {', '.join(map(repr, rendered.thinking_end_tags))})"),
        "--- prompt ---",
        rendered.prompt,
    ]
    return "\n".join(lines)


def pinned_info(version: str) -> dict[str, str]:
    """What the pins say of an oracle that is not built yet (building it takes minutes, so `info` does not)."""
    pin = pin_of(version)
    return {
        "llama_cpp_python_version": version,
        "llama_cpp_commit": pin.llama_cpp_commit,
        "sdist_sha256": pin.sdist_sha256,
        "built": f"no: `chatparity oracle build --version {version}` builds it",
    }


def pinned() -> str:
    """The default pin in one line: llama-cpp-python version and the llama.cpp commit it vendors."""
    return f"llama-cpp-python {DEFAULT_VERSION}, llama.cpp {pin_of(DEFAULT_VERSION).llama_cpp_commit}"


def main(argv: list[str], prog: str = "chatparity oracle") -> int:
    """Run `chatparity oracle build|info|render`."""
    args = parser(prog).parse_args(argv)
    version = resolve_version(args.version)
    try:
        if args.command == "build":
            print(ensure_binary(version))
            return 0
        if args.command == "info" and not binary_path(version).exists():
            print(json.dumps(pinned_info(version), indent=2))
            return 0
        with Oracle(version=version) as oracle:
            if args.command == "info":
                print(json.dumps(oracle.info(), indent=2))
                return 0
            print(render_demo(oracle, template_path(args.template, version), args))
            return 0
    except (BuildError, SourceError, OracleError, FileNotFoundError, PinError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 1
