"""The grammar llama.cpp's differential autoparser builds (common/chat-auto-parser-generator.cpp), from the
markers a syntax module reads off its template: reasoning, then content, then the tool-call section."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from reply.analysis import UNWRAPPED, Content, Reasoning, trim_whitespace
from reply.chat import ChatBuilder, JsonLayout
from reply.peg import Parser
from reply.request import Request
from reply.schema import parameters
from reply.template import Template


class ToolMode(Enum):
    """How calls are written: a JSON object, a tag with JSON arguments, or tags for every argument."""

    JSON_NATIVE = 1
    TAG_WITH_JSON = 2
    TAG_WITH_TAGGED = 3


@dataclass(frozen=True)
class ToolFormat:
    """The markers of one tool-call syntax, named as llama.cpp's analysis names them."""

    mode: ToolMode
    section_start: str = ""
    section_end: str = ""
    per_call_start: str = ""
    per_call_end: str = ""
    name_prefix: str = ""
    name_suffix: str = ""
    args_separator: str = ""
    close: str = ""
    args_start: str = ""
    args_end: str = ""
    arg_name_prefix: str = ""
    arg_name_suffix: str = ""
    arg_value_prefix: str = ""
    arg_value_suffix: str = ""
    tolerate_intertag_whitespace: bool = False
    json: JsonLayout = field(default_factory=JsonLayout)

    @property
    def trigger(self) -> str:
        """Where content stops and the calls start."""
        return self.section_start or self.per_call_start


def reasoning_parser(b: ChatBuilder, reasoning: Reasoning, extracting: bool) -> Parser:
    """optional(<start> reasoning </end>) with the tags' surrounding whitespace optional."""
    if not extracting or not reasoning.end:
        return b.eps()
    body = b.reasoning(b.until(trim_whitespace(reasoning.end)))
    if reasoning.start:
        return b.optional(b.seq(b.optspace(reasoning.start), body, b.optspace(reasoning.end)))
    return b.optional(b.seq(body, b.optspace(reasoning.end)))


def build(b: ChatBuilder, req: Request, reasoning: Reasoning, fmt: ToolFormat | None,
          content: Content = UNWRAPPED) -> Parser:
    """autoparser::build_parser: generation-prompt prefix, then reasoning, content (inside its markers when the
    template always wraps it) and calls."""
    extracting = req.extract_reasoning and reasoning.found
    think = reasoning_parser(b, reasoning, extracting)
    pure_content = not reasoning.found
    if fmt is not None and req.use_tools:
        body = _tools(b, req, fmt, think, content)
        pure_content = False
    elif content.always:
        inner = b.seq(content.start, b.content(b.until(content.end)), content.end, b.end())
        body = b.seq(think if extracting else b.content(b.until(content.start)), inner)
    else:
        body = b.seq(think, b.content(b.rest()), b.end())
    prefix = b.prefix(req.generation_prompt, trim_whitespace(reasoning.start))
    return b.seq(prefix, body) if pure_content else b.seq(prefix, b.space(), body)


def _tools(b: ChatBuilder, req: Request, fmt: ToolFormat, think: Parser, content: Content) -> Parser:
    if fmt.mode is ToolMode.JSON_NATIVE:
        return _json_native(b, req, fmt, think, content)
    if fmt.mode is ToolMode.TAG_WITH_JSON:
        return _tag_json(b, req, fmt, think)
    return _tag_tagged(b, req, fmt, think)


def _json_native(b: ChatBuilder, req: Request, fmt: ToolFormat, think: Parser, content: Content) -> Parser:
    if not fmt.section_start and fmt.per_call_start:
        single = b.standard_json_tools(fmt.per_call_start, fmt.per_call_end, req.tools, req.parallel, req.required,
                                       fmt.json)
        calls = b.rule("tool-calls", b.one_or_more(b.seq(single, b.space())))
    else:
        calls = b.standard_json_tools(fmt.section_start, fmt.section_end, req.tools, req.parallel, req.required,
                                      fmt.json)
    if content.always:
        wrapped = b.optional(b.seq(content.start, b.content(b.until(content.end)), content.end))
        return b.seq(think, wrapped, calls, b.end())
    start = fmt.section_start or fmt.per_call_start or "{"
    return b.seq(think, b.optional(b.content(b.until(start))), calls, b.end())


def _func(b: ChatBuilder, fmt: ToolFormat, name: str, args: Parser, peek: Parser | None) -> Parser:
    """build_func_parser: the opening with the name, the arguments, and the close."""
    opening = b.tool_open(b.seq(fmt.name_prefix, b.tool_name(b.lit(name)), fmt.name_suffix))
    if fmt.args_separator:
        opening = b.seq(opening, b.space(), fmt.args_separator)
    atomic_done = True
    if fmt.name_suffix:
        func = b.seq(opening, b.space(), args)
    elif peek is not None:
        func = b.seq(b.atomic(b.seq(opening, b.space(), peek)), args)
    else:
        func = b.seq(opening, b.space(), args)
        atomic_done = False
    if fmt.close:
        func = b.seq(func, b.space(), b.tool_close(b.lit(fmt.close)))
    elif fmt.per_call_end:
        ahead = b.seq(b.space(), fmt.per_call_end) if fmt.tolerate_intertag_whitespace else b.lit(fmt.per_call_end)
        func = b.seq(func, b.tool_close(b.peek(ahead)))
    else:
        func = b.seq(func, b.tool_close(b.space()))
    return func if atomic_done else b.atomic(func)


def _content_then(b: ChatBuilder, fmt: ToolFormat, think: Parser, calls: Parser) -> Parser:
    before = b.until(fmt.trigger) if fmt.trigger else b.eps()
    return b.seq(think, b.optional(b.content(before)), calls, b.end())


def _tag_json(b: ChatBuilder, req: Request, fmt: ToolFormat, think: Parser) -> Parser:
    choices = []
    for tool in req.tools:
        name = tool["function"]["name"]
        args = b.tool_args(b.json())
        if fmt.args_start:
            args = b.seq(fmt.args_start, args)
        if fmt.args_end:
            args = b.seq(args, fmt.args_end)
        peek = b.peek(b.lit(fmt.args_start)) if fmt.args_start else None
        choices.append(b.rule(f"tool-{name}", _func(b, fmt, name, args, peek)))
    choice = b.choice(*choices)
    if fmt.per_call_start:
        wrapped = b.seq(fmt.per_call_start, choice, fmt.per_call_end)
        calls = b.seq(wrapped, b.zero_or_more(b.seq(b.space(), wrapped))) if req.parallel else wrapped
        calls = b.rule("tool-call", calls)
        if fmt.section_start:
            close = b.lit(fmt.section_end) if fmt.section_end else b.end()
            calls = b.rule("tool-calls", b.seq(fmt.section_start, b.space(), calls, b.space(), close))
    else:
        many = b.zero_or_more(b.seq(", ", choice)) if req.parallel else b.eps()
        calls = b.rule("tool-call", b.seq(fmt.section_start, choice, many, fmt.section_end))
    if not req.required:
        calls = b.optional(calls)
    return _content_then(b, fmt, think, calls)


def _tag_tagged(b: ChatBuilder, req: Request, fmt: ToolFormat, think: Parser) -> Parser:
    until_suffix = b.rule("until-suffix", b.until(fmt.arg_value_suffix))
    choices = []
    for tool in req.tools:
        function = tool["function"]
        name = function["name"]
        required: list[Parser] = []
        optional: list[Parser] = []
        for param in parameters(function):
            opening = b.tool_arg_open(b.seq(fmt.arg_name_prefix, b.tool_arg_name(b.lit(param.name)),
                                            fmt.arg_name_suffix))
            close = b.tool_arg_close(b.lit(fmt.arg_value_suffix))
            if param.may_be_string:
                value = b.seq(b.tool_arg_string_value(until_suffix), close)
            else:
                value = b.seq(b.tool_arg_value(b.json()), close)
            arg = b.rule(f"tool-{name}-arg-{param.name}", b.tool_arg(b.seq(opening, fmt.arg_value_prefix, value)))
            (required if param.required else optional).append(arg)
        seq_parts: list[Parser] = []
        for i, arg in enumerate(required):
            if i:
                seq_parts.append(b.space())
            seq_parts.append(arg)
        if optional:
            seq_parts.append(b.repeat(b.seq(b.space(), b.choice(*optional)), 0, -1))
        args = b.seq(*seq_parts) if seq_parts else b.eps()
        if fmt.args_start:
            args = b.seq(fmt.args_start, args)
        if fmt.args_end:
            args = b.seq(args, fmt.args_end)
        peek = b.peek(b.lit(fmt.arg_name_prefix)) if fmt.arg_name_prefix and required else None
        choices.append(b.rule(f"tool-{name}", _func(b, fmt, name, args, peek)))
    choice = b.choice(*choices)
    if fmt.per_call_start:
        wrapped = b.seq(fmt.per_call_start, b.space(), choice, b.space(), fmt.per_call_end)
        if req.parallel:
            calls = b.seq(wrapped, b.zero_or_more(b.seq(b.space(), wrapped)), b.space())
        else:
            calls = b.seq(wrapped, b.space())
        calls = b.rule("tool-call", calls)
        if fmt.section_start:
            close = b.seq(fmt.section_end, b.space()) if fmt.section_end else b.end()
            calls = b.rule("tool-calls", b.seq(fmt.section_start, b.space(), calls, b.space(), close))
    else:
        many = b.zero_or_more(b.seq(", ", choice)) if req.parallel else b.eps()
        calls = b.rule("tool-call", b.seq(fmt.section_start, b.space(), choice, many, b.space(), fmt.section_end))
    if not req.required:
        calls = b.optional(calls)
    return _content_then(b, fmt, think, calls)


@dataclass(frozen=True)
class FixedFormat:
    """A syntax whose markers are fixed (`fmt`): a template is read with them when it writes the probe call
    (`probe_call`); the calls start at the format's trigger."""

    fmt: ToolFormat
    probe_call: str

    def detect(self, template: Template) -> bool:
        """The template writes the probe call in this format."""
        return self.probe_call in template.call_turn

    def build(self, b: ChatBuilder, template: Template, req: Request) -> Parser:
        """Reasoning, content up to the trigger, then the calls."""
        return build(b, req, template.reasoning, self.fmt, template.content)

    def call_starts(self, template: Template, req: Request) -> list[str]:
        """Where the calls start (nowhere when no tools are offered)."""
        return [self.fmt.trigger] if req.use_tools else []
