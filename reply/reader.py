"""Readers: one per session, holding the grammar its template's syntax builds; whole parses and streams."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from reply.analysis import trim_whitespace
from reply.chat import ChatBuilder, Mapper
from reply.messages import Message, Rejected, ToolCall, Unsupported
from reply.peg import Arena, Context, Result, Status
from reply.problems import find_problems
from reply.request import Request
from reply.syntaxes import Syntax, select
from reply.template import Template
from reply.templating import PINNED_NOW, generation_prompt

REJECTION = "The model produced output that does not match the expected peg-native format"
PLACEHOLDER_MESSAGES = [{"role": "user", "content": "Hello"}]


@contextmanager
def _deep_recursion(limit: int = 20000) -> Iterator[None]:
    """Nested JSON recurses in the grammar; allow deep nesting for one parse."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _system_merged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """llama.cpp's fallback for templates without a system role: the system text joins the next message."""
    out = [{**m, "role": "system" if m.get("role") == "developer" else m.get("role")} for m in messages]
    if len(out) > 1 and out[0]["role"] == "system":
        out[1] = {**out[1], "content": f"{out[0].get('content', '')}\n{out[1].get('content', '')}"}
        return out[1:]
    return out[1:] if out and out[0]["role"] == "system" else out


def _request(session: Any, template: Template) -> Request:
    kwargs = dict(getattr(session, "kwargs", None) or {})
    thinking = bool(getattr(session, "enable_thinking", True))
    if isinstance(kwargs.get("enable_thinking"), bool):
        thinking = kwargs["enable_thinking"]
    tools = list(getattr(session, "tools", None) or [])
    messages = [dict(m) for m in getattr(session, "messages", None) or PLACEHOLDER_MESSAGES]
    extra = {**kwargs, "enable_thinking": thinking}
    now = getattr(session, "now", PINNED_NOW) or PINNED_NOW
    errors = []
    for attempt in (messages, _system_merged(messages), PLACEHOLDER_MESSAGES):
        try:
            gp = generation_prompt(template.source, bos=template.bos, eos=template.eos, messages=attempt,
                                   tools=tools, enable_thinking=thinking, extra=extra, now=now)
            break
        except Exception as error:
            errors.append(str(error))
    else:
        raise Unsupported(f"the template does not render with jinja2: {errors[0]}")
    return Request(
        tools=tools,
        tool_choice=str(getattr(session, "tool_choice", "auto") or "auto"),
        parallel=bool(getattr(session, "parallel_tool_calls", False)),
        extract_reasoning=(getattr(session, "reasoning_format", "deepseek") or "deepseek") != "none",
        enable_thinking=thinking,
        generation_prompt=gp,
    )


def open_reader(session: Any) -> Reader:
    """A reader for a session (template source, bos, eos, tools, tool_choice, parallel_tool_calls,
    enable_thinking, kwargs, reasoning_format, messages); Unsupported when no syntax reads its template."""
    template = Template(session.template_source, getattr(session, "bos", "") or "", getattr(session, "eos", "") or "")
    syntax = select(template)
    if syntax is None:
        raise Unsupported(f"no reply syntax for this template (llama.cpp route: {template.route})")
    return Reader(syntax, template, _request(session, template))


class Reader:
    """Reads replies of one session."""

    def __init__(self, syntax: Syntax, template: Template, request: Request) -> None:
        self.syntax = syntax
        self.template = template
        self.request = request
        builder = ChatBuilder()
        self.arena = Arena(syntax.build(builder, template, request))
        self.prefix = request.generation_prompt
        tags = [trim_whitespace(template.reasoning.start), trim_whitespace(template.reasoning.end)]
        tags += [tag for tag in ("<think>", "</think>") if tag in template.source]
        found = [m for m in [*tags, *syntax.call_starts(template, request)] if len(m) > 1]
        self.markers = tuple(sorted(set(found), key=lambda m: (-len(m), m)))

    def parse(self, text: str, partial: bool = False) -> Message:
        """The message in a reply; Rejected when llama.cpp would throw. A partial (cut off) reply reads as a
        stream would show it at that point (a marker still arriving at its end held back), and so does a
        finished one whose read is empty."""
        ctx = Context(self.prefix + text)
        with _deep_recursion():
            result = self.arena.parse(ctx)
        message = self.read(ctx, result, partial)
        if not partial:
            return self.kept(message, text)
        held = hold_back(message, ctx.text, self.markers)
        if held.empty:
            held = Replay(self).advance(text)
        return Message(held.reasoning_content, held.content, held.tool_calls, message.problems)

    def kept(self, message: Message, text: str) -> Message:
        """A finished read, or where it is empty what a stream of the reply showed last (llama-server ends
        its stream there, so whole and streamed reads agree)."""
        if not message.empty or not text:
            return message
        shown = Replay(self).advance(text)
        return Message(shown.reasoning_content, shown.content, shown.tool_calls, message.problems)

    def stream(self) -> Stream:
        """An incremental reader fed chunk by chunk."""
        return Stream(self)

    def read(self, ctx: Context, result: Result, partial: bool, diagnose: bool = True) -> Message:
        """common_chat_peg_parse's reading of a parse result, with its problems when `diagnose`."""
        if result.status is Status.FAIL:
            if partial and result.end > 0:
                return Message(problems=find_problems(self, ctx, result, None) if diagnose else ())
            raise Rejected(REJECTION, lambda: find_problems(self, ctx, result, None))
        mapped = Mapper(ctx.text).run(result.nodes)
        return Message(
            reasoning_content="".join(mapped.reasoning),
            content="".join(mapped.content),
            tool_calls=tuple(ToolCall(c.name, c.arguments, c.id) for c in mapped.calls),
            problems=find_problems(self, ctx, result, mapped) if diagnose else (),
        )


def _held(shown: str, text: str, markers: tuple[str, ...]) -> str:
    held = 0
    for marker in markers:
        for size in range(min(len(marker) - 1, len(shown)), held, -1):
            if shown.endswith(marker[:size]) and text.endswith(marker[:size]):
                held = size
                break
    return shown[:len(shown) - held]


def hold_back(message: Message, text: str, markers: tuple[str, ...]) -> Message:
    """A partial read without the start of a marker still arriving at the end of the input `text`."""
    return Message(reasoning_content=_held(message.reasoning_content, text, markers),
                   content=_held(message.content, text, markers), tool_calls=message.tool_calls)


def extends(before: Message, after: Message) -> bool:
    """Whether `after` only adds to `before`: text grows, calls never vanish, names and arguments grow."""
    if not (after.content.startswith(before.content)
            and after.reasoning_content.startswith(before.reasoning_content)
            and len(after.tool_calls) >= len(before.tool_calls)):
        return False
    return all(new.name.startswith(old.name) and new.arguments.startswith(old.arguments)
               for old, new in zip(before.tool_calls, after.tool_calls))


class Replay:
    """What a character-by-character stream shows: each prefix's read (a marker still arriving held back)
    when it adds to the last one shown, else the last one. Used where a read shows nothing new (it failed,
    or is empty), so that what is shown never depends on how the reply was chunked."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.ctx = Context(reader.prefix, resumable=True)
        self.shown = Message()

    def advance(self, text: str) -> Message:
        """Shown after every character of `text` past what was replayed already."""
        done = len(self.ctx.text) - len(self.reader.prefix)
        for char in text[done:]:
            self.ctx.text += char
            with _deep_recursion():
                result = self.reader.arena.parse(self.ctx)
            try:
                fresh = self.reader.read(self.ctx, result, partial=True, diagnose=False)
            except Rejected:
                continue
            held = hold_back(fresh, self.ctx.text, self.reader.markers)
            if not held.empty and extends(self.shown, held):
                self.shown = held
        return self.shown


class Stream:
    """A reply read as it arrives: each feed parses on from where the last one stopped."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.ctx = Context(reader.prefix, resumable=True)
        self.snapshot = Message()
        self.result: Result | None = None
        self.replay = Replay(reader)

    @property
    def examined(self) -> int:
        """Characters the scanners looked at so far (the stream's parsing work)."""
        return self.ctx.examined

    def feed(self, chunk: str) -> Message:
        """The snapshot after this chunk (the previous one when nothing new can be read yet); snapshots
        carry no problems, the finished reading does."""
        self.ctx.text += chunk
        with _deep_recursion():
            self.result = self.reader.arena.parse(self.ctx)
        fresh = self.reader.read(self.ctx, self.result, partial=True, diagnose=False)
        held = hold_back(fresh, self.ctx.text, self.reader.markers)
        if held.empty or not extends(self.snapshot, held):
            held = self.replay.advance(self.ctx.text[len(self.reader.prefix):])
        if extends(self.snapshot, held):
            self.snapshot = held
        return self.snapshot

    def finish(self) -> Message:
        """The finished reply's reading, equal to a whole parse of everything fed: an empty finished read keeps
        the last snapshot, as llama-server keeps its last message."""
        if self.result is None:
            with _deep_recursion():
                self.result = self.reader.arena.parse(self.ctx)
        final = self.reader.read(self.ctx, self.result, partial=False)
        if final.empty and not self.snapshot.empty:
            shown = self.snapshot
            return Message(shown.reasoning_content, shown.content, shown.tool_calls, final.problems)
        return final


__all__ = ["Reader", "Replay", "Stream", "open_reader"]
