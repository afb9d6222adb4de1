"""Rebuilding the template index: hashes, the curated family table, and what jinja2 and the oracle find."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import jinja2.meta
from jinja2 import nodes

from chatparity.model import Mode, Session, ToolMode
from corpora.conversations import USER
from corpora.jinja_env import RENDER_ERRORS, environment, error_text, render
from corpora.prompts import render_chat
from corpora.tools import STANDARD_TOOLS
from corpora.turn_shapes import TURN_SHAPES
from corpora.turns import closes_a_pair, common_suffix, find_markers, turn_body
from oracle.client import OracleError
from oracle.vocabs import Vocab, vocab_of_family
from templates.index import FAMILIES_PATH, TemplateEntry, read_template, sha256_text

PROBE_MARK = "PROBE_4f2a"


class Renderer(Protocol):
    """What the generator needs of the oracle: render a session request, tokenize a text."""

    def render(self, request: dict[str, Any]) -> Any:
        """The oracle's render of a session."""

    def tokenize(self, vocab: Vocab, text: str) -> Any:
        """llama.cpp's tokens of a text in a vocab."""


class FamiliesError(Exception):
    """The curated family table does not match the upstream set."""


def load_families(path: Path = FAMILIES_PATH) -> dict[str, Any]:
    """The curated table: per template family, syntax, bos, eos; and the kwarg values to try."""
    return json.loads(path.read_text(encoding="utf-8"))


def template_literals(source: str) -> str:
    """All literal text of a template (raw text and string constants), joined by newlines."""
    tree = environment().parse(source)
    parts = [node.data for node in tree.find_all(nodes.TemplateData)]
    parts += [node.value for node in tree.find_all(nodes.Const) if isinstance(node.value, str)]
    return "\n".join(parts)


def user_kwargs(source: str, kwarg_values: dict[str, list[Any]]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """The kwargs a user sets that the template reads (undeclared variables in the curated table)."""
    names = jinja2.meta.find_undeclared_variables(environment().parse(source))
    return tuple((name, tuple(kwarg_values[name])) for name in sorted(names) if name in kwarg_values)


def _renders_mark(source: str, context: dict[str, Any]) -> bool:
    """Whether the template renders the probe mark with this context (an error counts as no)."""
    try:
        return PROBE_MARK in render(source, context)
    except RENDER_ERRORS:
        return False


PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "tool1",
        "description": "Tool description",
        "parameters": {
            "type": "object",
            "properties": {"arg": {"type": "string", "description": "Arg description"}},
            "required": ["arg"],
        },
    },
}


def probe_object_arguments(source: str) -> bool:
    """Whether the template reads tool-call arguments as an object, probed as llama.cpp probes its caps."""
    call = {
        "id": "call00001",
        "type": "function",
        "function": {"name": "tool1", "arguments": {"arg": PROBE_MARK}},
    }
    messages = [
        dict(USER),
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "Tool response", "tool_call_id": "call00001"},
        {"role": "assistant", "content": "The tool response was 'tool response'"},
        dict(USER),
    ]
    context = {"messages": messages, "tools": [PROBE_TOOL], "bos_token": "", "eos_token": ""}
    return _renders_mark(source, {**context, "add_generation_prompt": False})


def probe_system_role(source: str) -> bool:
    """Whether the template renders a system message (else llama.cpp merges it into the next turn)."""
    messages = [{"role": "system", "content": PROBE_MARK}, dict(USER)]
    return _renders_mark(
        source, {"messages": messages, "bos_token": "", "eos_token": "", "add_generation_prompt": True}
    )


def probe_session(entry: TemplateEntry, source: str, tools: ToolMode) -> Session:
    """A single-turn session of the template with thinking on, offering the standard tools in this tool mode."""
    return Session(
        template=entry.name,
        template_source=source,
        template_sha256=entry.sha256,
        bos=entry.bos,
        eos=entry.eos,
        mode=Mode(True, tools),
        conversation="single",
        messages=(USER,),
        tool_defs=STANDARD_TOOLS,
    )


def thinking_tags(oracle: Renderer, entry: TemplateEntry, source: str) -> tuple[str, str]:
    """The thought tags llama.cpp reports (thinking on, no tools; the first end tag written)."""
    session = probe_session(entry, source, ToolMode.NONE)
    result = oracle.render(session.render_request())
    start = (result.thinking_start_tag or "").strip()
    ends = [tag.strip() for tag in result.thinking_end_tags if tag.strip()]
    written = [tag for tag in ends if tag in source] or ends
    return start, (written[0] if written else "")


def reply_markers(oracle: Renderer, entry: TemplateEntry, source: str) -> tuple[str, ...]:
    """The markers a reply writes, sorted: those in the thinking tags and in the tokens llama.cpp asks a sampler
    to keep whole (preserved_tokens, thinking on, tools offered)."""
    tags = [entry.think_start, entry.think_end]
    session = probe_session(entry, source, ToolMode.AUTO)
    try:
        tags += oracle.render(session.render_request()).preserved_tokens
    except OracleError:
        pass
    return tuple(sorted({marker for tag in tags for marker in find_markers(tag)}))


def split_markers(oracle: Renderer, vocab: Vocab, markers: tuple[str, ...]) -> tuple[str, ...]:
    """The markers that are more than one token in a vocab."""
    return tuple(marker for marker in markers if len(oracle.tokenize(vocab, marker).tokens) != 1)


def _turn(entry: TemplateEntry, source: str, message: dict[str, Any], thinking: bool) -> str | None:
    """A turn's text after the generation prompt (end of turn attached), or None when it can't be isolated."""
    tools = list(STANDARD_TOOLS)
    try:
        without = render_chat(entry, source, [USER], tools, thinking, {}, False)
        with_gp = render_chat(entry, source, [USER], tools, thinking, {}, True)
        rendered = render_chat(entry, source, [USER, message], tools, thinking, {}, False)
    except RENDER_ERRORS:
        return None
    return turn_body(without, with_gp, rendered, entry.think_start, entry.think_end, False, entry.eos).text


def end_of_turn(entry: TemplateEntry, source: str) -> tuple[str, ...]:
    """The markers a model stops on, found by differential rendering of content and call turns."""
    # Content turns: the first marker after the content of two different turns that also ends the user's turn
    # and is not written twice in a call turn (else the last one, unless it closes a pair). Call turns: the
    # final marker unless it closes a pair the turn opened (</tool_calls>, <|tools_suffix|>).
    markers: set[str] = set()
    tools = list(STANDARD_TOOLS)
    shapes = {shape.name: shape.message for shape in TURN_SHAPES}
    for thinking in (True, False):
        try:
            prompt = render_chat(entry, source, [USER], tools, thinking, {}, False)
        except RENDER_ERRORS:
            continue
        user_tail = prompt[prompt.rfind(USER["content"]) + len(USER["content"]) :]
        first = _turn(entry, source, {"role": "assistant", "content": "Alpha"}, thinking)
        second = _turn(entry, source, {"role": "assistant", "content": "Beta!"}, thinking)
        one = _turn(entry, source, shapes["one_call"], thinking) or ""
        if first is not None and second is not None:
            after = common_suffix(first, second)
            shared = [
                marker for marker in find_markers(after) if marker in user_tail and one.count(marker) < 2
            ]
            final = find_markers(after.rstrip())[-1:]
            if (
                not shared
                and final
                and after.rstrip().endswith(final[0])
                and not closes_a_pair(final[0], first)
            ):
                shared = final
            markers.update(shared[:1])
        if find_markers(one.rstrip()):
            last = find_markers(one.rstrip())[-1]
            if one.rstrip().endswith(last) and not closes_a_pair(last, one):
                markers.add(last)
    return tuple(sorted(markers))


def writes_calls(entry: TemplateEntry, source: str) -> bool:
    """Whether the template writes a tool call of an assistant turn (its name and an argument value)."""
    one_call = next(shape.message for shape in TURN_SHAPES if shape.name == "one_call")
    return any(
        text is not None and "get_weather" in text and "Rio" in text
        for text in (_turn(entry, source, one_call, thinking) for thinking in (True, False))
    )


def build_entry(name: str, source: str, families: dict[str, Any], oracle: Renderer) -> TemplateEntry:
    """The index entry of one template."""
    curated = families["templates"].get(name)
    if curated is None:
        raise FamiliesError(f"{FAMILIES_PATH.name}: no family/syntax entry for upstream template {name!r}")
    entry = TemplateEntry(
        name=name,
        sha256=sha256_text(source),
        family=curated["family"],
        syntax=curated["syntax"],
        bos=curated.get("bos", ""),
        eos=curated.get("eos", ""),
        kwargs=user_kwargs(source, families["kwargs"]),
        object_arguments=probe_object_arguments(source),
        system_role=probe_system_role(source),
    )
    try:
        start, end = thinking_tags(oracle, entry, source)
    except OracleError as error:
        raise FamiliesError(f"{name}: the oracle cannot render the template: {error_text(error)}") from error
    entry = replace(entry, think_start=start, think_end=end)
    entry = replace(entry, end_of_turn=end_of_turn(entry, source), writes_calls=writes_calls(entry, source))
    found = (
        set(find_markers(template_literals(source)))
        | {start, end, entry.bos, entry.eos}
        | set(entry.end_of_turn)
    )
    vocab = vocab_of_family(entry.family)
    entry = replace(entry, markers=tuple(sorted(marker for marker in found if marker)))
    return replace(
        entry,
        vocab=vocab.name,
        vocab_exact=vocab.exact,
        split_markers=split_markers(oracle, vocab, reply_markers(oracle, entry, source)),
    )


def build_index(
    directory: Path, oracle: Renderer, families: dict[str, Any] | None = None
) -> list[TemplateEntry]:
    """Index entries for every *.jinja file of an upstream templates directory, sorted by name."""
    families = families if families is not None else load_families()
    names = sorted(path.name for path in directory.glob("*.jinja"))
    missing = sorted(set(names) - set(families["templates"]))
    if missing:
        raise FamiliesError(
            f"{FAMILIES_PATH.name}: no family/syntax entry for upstream templates: {', '.join(missing)}"
        )
    stale = sorted(set(families["templates"]) - set(names))
    if stale:
        raise FamiliesError(f"{FAMILIES_PATH.name}: entries for templates not upstream: {', '.join(stale)}")
    return [build_entry(name, read_template(directory / name), families, oracle) for name in names]
