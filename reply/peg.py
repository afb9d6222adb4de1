"""A PEG engine with llama.cpp's parse semantics (common/peg-parser.cpp), resumable on append-only input.

Every parser is lenient as llama.cpp's chat parse is: running out of input mid-way gives NEED_MORE, not
FAIL. A streaming context memoizes every result that never looked at the end of the input (such a result
cannot change when text is appended) and resumes long scans and repetitions where they stopped, so a
re-parse after a feed only walks the parsers that touch the new end: the work per feed is bounded by the
new text plus the nesting depth at the end, not by the reply's length.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple, TypeVar

from reply.json_value import KINDS as JSON_KINDS
from reply.json_value import scan as scan_json

SPACE = frozenset(" \t\n\v\f\r")
_SPACE_RUN = re.compile("[ \t\n\v\f\r]*")


class Status(Enum):
    """The outcome of one parser at one position."""

    FAIL = 0
    SUCCESS = 1
    NEED_MORE = 2


@dataclass(eq=False, slots=True)
class Node:
    """One AST node: a semantic tag (or a rule above tags) over input[start:end]."""

    rule: str
    tag: str
    start: int
    end: int
    children: tuple[Node, ...]
    is_partial: bool


FAIL, SUCCESS, NEED_MORE = Status.FAIL, Status.SUCCESS, Status.NEED_MORE
STATUSES = (FAIL, SUCCESS, NEED_MORE)
_as_result = tuple.__new__  # _as_result(Result, raw): a Result from a plain tuple, without NamedTuple's __new__


class Result(NamedTuple):
    """A parser's result: status, span and the AST nodes it produced."""

    status: Status
    start: int
    end: int
    nodes: tuple[Node, ...] = ()


@dataclass(slots=True)
class Context:
    """One parse of one input; `resumable` keeps memo tables for the next, longer input, and `frontier`, when
    a list, collects (parser id, start, result) of every resumable run that looked at the end of the input, in
    the order they finished; `nesting` counts the recursive rules running (`_nested`)."""

    text: str
    resumable: bool = False
    lenient: bool = True
    examined: int = 0
    eof: bool = False
    nesting: int = 0
    memo: dict[tuple[int, int], tuple] = field(default_factory=dict)
    scans: dict[tuple[int, int], typing.Any] = field(default_factory=dict)
    frontier: list[tuple[int, int, Result]] | None = None


class Trie:
    """Delimiter matching at a position: complete, partial (cut by the end of input) or none."""

    NO, PARTIAL, COMPLETE = 0, 1, 2

    def __init__(self, words: list[str]) -> None:
        self.words = [w for w in words if w]
        self.firsts = frozenset(w[0] for w in self.words)

    def check_at(self, text: str, pos: int) -> tuple[int, bool]:
        """The match at `pos` and whether more input could change it (a word the input ends inside)."""
        if text[pos] not in self.firsts:
            return Trie.NO, False
        partial = False
        size = len(text)
        for word in self.words:
            end = pos + len(word)
            if end <= size:
                if text.startswith(word, pos):
                    return Trie.COMPLETE, False
            elif word.startswith(text[pos:]):
                partial = True
        return (Trie.PARTIAL if partial else Trie.NO), partial


class Parser:
    """Base of the parser variants; `id` indexes the arena."""

    id: int = -1


@dataclass(eq=False)
class Eps(Parser):
    """Matches nothing."""


@dataclass(eq=False)
class End(Parser):
    """Matches the end of input."""


@dataclass(eq=False)
class Literal(Parser):
    """Matches an exact string."""

    literal: str


@dataclass(eq=False)
class Sequence(Parser):
    """Matches children in order."""

    children: list[Parser]


@dataclass(eq=False)
class Choice(Parser):
    """Ordered choice: the first child that does not fail."""

    children: list[Parser]


@dataclass(eq=False)
class Repeat(Parser):
    """Matches the child between min_count and max_count times (-1: unbounded)."""

    child: Parser
    min_count: int
    max_count: int


@dataclass(eq=False)
class Peek(Parser):
    """Positive lookahead."""

    child: Parser


@dataclass(eq=False)
class Negate(Parser):
    """Negative lookahead."""

    child: Parser


@dataclass(eq=False)
class Space(Parser):
    """Matches zero or more C-locale whitespace characters."""


@dataclass(eq=False)
class Chars(Parser):
    """Matches characters of a class between min_count and max_count times."""

    accept: Callable[[str], bool]
    min_count: int
    max_count: int


@dataclass(eq=False)
class StringContent(Parser):
    """A quoted string's content up to (not including) the closing delimiter, escapes checked."""

    delimiter: str


@dataclass(eq=False)
class Until(Parser):
    """Everything up to one of the delimiters (a delimiter cut by the end of input also stops it)."""

    delimiters: list[str]
    trie: Trie = field(init=False)

    def __post_init__(self) -> None:
        self.trie = Trie(self.delimiters)


@dataclass(eq=False)
class Rule(Parser):
    """A named rule: makes an AST node named `name`."""

    name: str
    child: Parser | None = None


@dataclass(eq=False)
class Tag(Parser):
    """A semantic tag: makes an AST node tagged `tag`."""

    tag: str
    child: Parser


@dataclass(eq=False)
class Atomic(Parser):
    """Drops the child's nodes when the child needs more input."""

    child: Parser


@dataclass(eq=False)
class Json(Parser):
    """A JSON value of one kind (value, object, array, bool, null), as llama.cpp's json rules read it."""

    kind: str


ParserT = TypeVar("ParserT", bound=Parser)


class Builder:
    """Makes parsers; `+` style helpers mirror common_peg_parser_builder."""

    def __init__(self) -> None:
        self.parsers: list[Parser] = []
        self.rules: dict[str, Rule] = {}
        self.json_parsers: dict[str, Parser] = {}

    def add(self, parser: ParserT) -> ParserT:
        """Register a parser in the arena."""
        parser.id = len(self.parsers)
        self.parsers.append(parser)
        return parser

    def lit(self, text: str) -> Parser:
        """A literal."""
        return self.add(Literal(text))

    def seq(self, *parts: Parser | str) -> Parser:
        """A sequence (strings become literals)."""
        return self.add(Sequence([self.lit(p) if isinstance(p, str) else p for p in parts]))

    def choice(self, *parts: Parser | str) -> Parser:
        """An ordered choice."""
        return self.add(Choice([self.lit(p) if isinstance(p, str) else p for p in parts]))

    def eps(self) -> Parser:
        """Epsilon."""
        return self.add(Eps())

    def end(self) -> Parser:
        """End of input."""
        return self.add(End())

    def optional(self, p: Parser | str) -> Parser:
        """p?"""
        return self.add(Repeat(self.lit(p) if isinstance(p, str) else p, 0, 1))

    def zero_or_more(self, p: Parser) -> Parser:
        """p*"""
        return self.add(Repeat(p, 0, -1))

    def one_or_more(self, p: Parser) -> Parser:
        """p+"""
        return self.add(Repeat(p, 1, -1))

    def repeat(self, p: Parser, low: int, high: int) -> Parser:
        """p{low,high}"""
        return self.add(Repeat(p, low, high))

    def peek(self, p: Parser) -> Parser:
        """&p"""
        return self.add(Peek(p))

    def negate(self, p: Parser) -> Parser:
        """!p"""
        return self.add(Negate(p))

    def space(self) -> Parser:
        """Whitespace*."""
        return self.add(Space())

    def chars(self, accept: Callable[[str], bool], low: int = 1, high: int = -1) -> Parser:
        """[class]{low,high}"""
        return self.add(Chars(accept, low, high))

    def until(self, *delimiters: str) -> Parser:
        """Everything up to a delimiter."""
        return self.add(Until(list(delimiters)))

    def rest(self) -> Parser:
        """Everything."""
        return self.add(Until([]))

    def atomic(self, p: Parser) -> Parser:
        """No nodes unless complete."""
        return self.add(Atomic(p))

    def tag(self, name: str, p: Parser) -> Parser:
        """A tagged node."""
        return self.add(Tag(name, p))

    def rule(self, name: str, body: Callable[[], Parser] | Parser) -> Parser:
        """A named rule. A callable body is built once per name and may refer to the rule recursively."""
        if callable(body):
            if name in self.rules:
                return self.rules[name]
            rule = self.add(Rule(name))
            self.rules[name] = rule
            rule.child = body()
            return rule
        rule = self.add(Rule(name))
        rule.child = body
        return rule

    def string_content(self, delimiter: str) -> Parser:
        """A string's inside."""
        return self.add(StringContent(delimiter))

    def json_number(self) -> Parser:
        """A JSON number that commits only when the next character cannot extend it."""

        def make() -> Parser:
            digits = self.chars(str.isdigit, 0, -1)
            int_part = self.choice("0", self.seq(self.chars(lambda c: "1" <= c <= "9", 1, 1), digits))
            frac = self.seq(".", self.chars(str.isdigit, 1, -1))
            exp = self.seq(self.choice("e", "E"), self.optional(self.chars(lambda c: c in "+-", 1, 1)),
                           self.chars(str.isdigit, 1, -1))
            more = self.negate(self.chars(lambda c: c in "0123456789.eE+-", 1, 1))
            return self.seq(self.optional("-"), int_part, self.optional(frac), self.optional(exp), more)

        return self.rule("json-number", make)

    def rules_json(self, name: str) -> Parser:
        """One of the JSON value rules (json-object, json-array, json-bool, json-null) by name."""
        kind = name.removeprefix("json-")
        if kind not in JSON_KINDS:
            raise ValueError(f"no JSON rule named {name!r}")
        if kind not in self.json_parsers:
            self.json_parsers[kind] = self.add(Json(kind))
        return self.json_parsers[kind]

    def json(self) -> Parser:
        """A JSON value (json-value: object, array, string, number, bool or null), read to any depth."""
        return self.rules_json("json-value")


Raw = tuple  # (status, start, end, nodes): a Result as a plain tuple, what compiled functions return
Run = Callable[[Context, int], Raw]


class Arena:
    """A built grammar: runs the root parser over a context. Each parser is compiled once per mode into a
    function of (context, position) returning a plain (status, start, end, nodes) tuple and calling its
    children's functions directly; in the resumable mode every function is wrapped by the memo table."""

    def __init__(self, root: Parser) -> None:
        self.root = root
        self.compiled: dict[bool, dict[Parser, Run]] = {False: {}, True: {}}

    def parse(self, ctx: Context) -> Result:
        """Parse the whole context from its start."""
        return _as_result(Result, self.function(self.root, ctx.resumable)(ctx, 0))

    def at(self, p: Parser, ctx: Context, start: int) -> Result:
        """Run one parser at one position (memoized when the context is resumable)."""
        return _as_result(Result, self.function(p, ctx.resumable)(ctx, start))

    def function(self, p: Parser, resumable: bool) -> Run:
        """The compiled function of a parser in one mode (a recursive rule reaches itself through `_nested`)."""
        table = self.compiled[resumable]
        found = table.get(p)
        if found is not None:
            return found
        made: list[Run] = []
        table[p] = _nested(made)
        run = getattr(self, MAKERS[p.__class__])(p, resumable)
        if resumable:
            run = _memoized(p.id, run)
        made.append(run)
        table[p] = run
        return run

    def _eps(self, p: Eps, resumable: bool) -> Run:
        def eps(ctx: Context, start: int) -> Raw:
            return (SUCCESS, start, start, ())
        return eps

    def _end(self, p: End, resumable: bool) -> Run:
        def end(ctx: Context, start: int) -> Raw:
            if start >= len(ctx.text):
                ctx.eof = True
                return (SUCCESS, start, start, ())
            return (FAIL, start, start, ())
        return end

    def _literal(self, p: Literal, resumable: bool) -> Run:
        lit = p.literal
        size = len(lit)

        def literal(ctx: Context, start: int) -> Raw:
            text = ctx.text
            left = len(text) - start
            ctx.examined += size if left >= size else max(0, left)
            if text.startswith(lit, start):
                return (SUCCESS, start, start + size, ())
            if left < size and lit.startswith(text[start:]):
                ctx.eof = True
                if ctx.lenient:
                    return (NEED_MORE, start, len(text), ())
            return (FAIL, start, start, ())
        return literal

    def _sequence(self, p: Sequence, resumable: bool) -> Run:
        if not resumable and any(isinstance(child, Literal) for child in p.children):
            return self._sequence_of_literals(p)
        runs = [self.function(child, resumable) for child in p.children]

        def sequence(ctx: Context, start: int) -> Raw:
            pos = start
            nodes: list[Node] = []
            for run in runs:
                status, _, end, found = run(ctx, pos)
                if status is FAIL:
                    return (FAIL, start, end, ())
                if found:
                    nodes += found
                if status is NEED_MORE:
                    return (NEED_MORE, start, end, tuple(nodes))
                pos = end
            return (SUCCESS, start, pos, tuple(nodes))
        return sequence

    def _sequence_of_literals(self, p: Sequence) -> Run:
        """A sequence outside the resumable mode (no memo table, no frontier) matching its literal children
        in place, as `_literal` matches them."""
        steps = [(child.literal, len(child.literal), None) if isinstance(child, Literal)
                 else ("", 0, self.function(child, False)) for child in p.children]

        def sequence(ctx: Context, start: int) -> Raw:
            text = ctx.text
            pos = start
            nodes: list[Node] = []
            for lit, size, run in steps:
                if run is None:
                    left = len(text) - pos
                    ctx.examined += size if left >= size else max(0, left)
                    if text.startswith(lit, pos):
                        pos += size
                        continue
                    if left < size and lit.startswith(text[pos:]):
                        ctx.eof = True
                        if ctx.lenient:
                            return (NEED_MORE, start, len(text), tuple(nodes))
                    return (FAIL, start, pos, ())
                status, _, end, found = run(ctx, pos)
                if status is FAIL:
                    return (FAIL, start, end, ())
                if found:
                    nodes += found
                if status is NEED_MORE:
                    return (NEED_MORE, start, end, tuple(nodes))
                pos = end
            return (SUCCESS, start, pos, tuple(nodes))
        return sequence

    def _choice(self, p: Choice, resumable: bool) -> Run:
        runs = [self.function(child, resumable) for child in p.children]

        def choice(ctx: Context, start: int) -> Raw:
            for run in runs:
                r = run(ctx, start)
                if r[0] is not FAIL:
                    return r
            return (FAIL, start, start, ())
        return choice

    def _repeat(self, p: Repeat, resumable: bool) -> Run:
        child = self.function(p.child, resumable)
        pid, low, high = p.id, p.min_count, p.max_count

        def repeat(ctx: Context, start: int) -> Raw:
            key = (pid, start)
            saved = ctx.scans.get(key) if resumable else None
            pos, count, nodes = saved if saved is not None else (start, 0, ())
            found = list(nodes)
            text = ctx.text
            while high == -1 or count < high:
                if pos >= len(text):
                    ctx.eof = True
                    break
                outer = ctx.eof
                ctx.eof = False
                status, _, end, more = child(ctx, pos)
                stable = not ctx.eof
                ctx.eof = outer or ctx.eof
                if status is SUCCESS:
                    if end == pos:
                        break
                    found += more
                    pos = end
                    count += 1
                    if stable and resumable:
                        ctx.scans[key] = (pos, count, tuple(found))
                    continue
                if status is NEED_MORE:
                    found += more
                    return (NEED_MORE, start, end, tuple(found))
                break
            if count < low:
                if pos >= len(text) and ctx.lenient:
                    ctx.eof = True
                    return (NEED_MORE, start, pos, tuple(found))
                return (FAIL, start, pos, ())
            return (SUCCESS, start, pos, tuple(found))
        return repeat

    def _peek(self, p: Peek, resumable: bool) -> Run:
        child = self.function(p.child, resumable)

        def peek(ctx: Context, start: int) -> Raw:
            return (child(ctx, start)[0], start, start, ())
        return peek

    def _negate(self, p: Negate, resumable: bool) -> Run:
        child = self.function(p.child, resumable)

        def negate(ctx: Context, start: int) -> Raw:
            status = child(ctx, start)[0]
            if status is SUCCESS:
                return (FAIL, start, start, ())
            if status is NEED_MORE:
                return (NEED_MORE, start, start, ())
            return (SUCCESS, start, start, ())
        return negate

    def _space(self, p: Space, resumable: bool) -> Run:
        def space(ctx: Context, start: int) -> Raw:
            text = ctx.text
            pos = _SPACE_RUN.match(text, start).end() if start < len(text) else start  # type: ignore[union-attr]
            ctx.examined += pos - start + 1
            if pos >= len(text):
                ctx.eof = True
            return (SUCCESS, start, pos, ())
        return space

    def _chars(self, p: Chars, resumable: bool) -> Run:
        accept, low, high = p.accept, p.min_count, p.max_count

        def chars(ctx: Context, start: int) -> Raw:
            text = ctx.text
            pos, count = start, 0
            while high == -1 or count < high:
                if pos >= len(text):
                    ctx.eof = True
                    if count >= low:
                        return (SUCCESS, start, pos, ())
                    return (NEED_MORE if ctx.lenient else FAIL, start, pos, ())
                ctx.examined += 1
                if not accept(text[pos]):
                    break
                pos += 1
                count += 1
            if count < low:
                return (FAIL, start, pos, ())
            return (SUCCESS, start, pos, ())
        return chars

    def _string(self, p: StringContent, resumable: bool) -> Run:
        pid, delim = p.id, p.delimiter
        stop = re.compile(f"[{re.escape(delim)}\\\\]")

        def string(ctx: Context, start: int) -> Raw:
            text = ctx.text
            key = (pid, start)
            pos = ctx.scans.get(key, start) if resumable else start
            size = len(text)
            while pos < size:
                found = stop.search(text, pos)
                if found is None:
                    ctx.examined += size - pos
                    pos = size
                    break
                ctx.examined += found.start() - pos + 1
                pos = found.start()
                if resumable:
                    ctx.scans[key] = pos
                if text[pos] == delim:
                    return (SUCCESS, start, pos, ())
                if pos + 1 >= size:
                    ctx.eof = True
                    return (NEED_MORE if ctx.lenient else FAIL, start, pos, ())
                e = text[pos + 1]
                if e == delim or e in '\\/bfnrt':
                    pos += 2
                elif e == "u":
                    digits = text[pos + 2:pos + 6]
                    if not all(d in "0123456789abcdefABCDEF" for d in digits):
                        return (FAIL, start, start, ())
                    if len(digits) < 4:
                        ctx.eof = True
                        return (NEED_MORE if ctx.lenient else FAIL, start, pos, ())
                    pos += 6
                else:
                    return (FAIL, start, start, ())
            if resumable:
                ctx.scans[key] = pos
            ctx.eof = True
            return (NEED_MORE if ctx.lenient else FAIL, start, pos, ())
        return string

    def _until(self, p: Until, resumable: bool) -> Run:
        pid, trie = p.id, p.trie
        if not trie.words:
            def rest(ctx: Context, start: int) -> Raw:
                size = len(ctx.text)
                ctx.examined += size - start
                ctx.eof = True
                return (NEED_MORE if ctx.lenient else SUCCESS, start, size, ())
            return rest
        stop = re.compile("[" + "".join(re.escape(c) for c in sorted(trie.firsts)) + "]")
        check = trie.check_at

        def until(ctx: Context, start: int) -> Raw:
            text = ctx.text
            key = (pid, start)
            pos = ctx.scans.get(key, start) if resumable else start
            size = len(text)
            while pos < size:
                found = stop.search(text, pos)
                if found is None:
                    ctx.examined += size - pos
                    if resumable and not ctx.eof:
                        ctx.scans[key] = size
                    break
                candidate = found.start()
                ctx.examined += candidate - pos + 1
                if resumable and not ctx.eof and candidate > pos:
                    ctx.scans[key] = candidate
                match, touched = check(text, candidate)
                if touched:
                    ctx.eof = True
                if match != Trie.NO:
                    return (SUCCESS, start, candidate, ())
                pos = candidate + 1
                if resumable and not ctx.eof:
                    ctx.scans[key] = pos
            ctx.eof = True
            return (NEED_MORE if ctx.lenient else SUCCESS, start, size, ())
        return until

    def _json(self, p: Json, resumable: bool) -> Run:
        pid, kind = p.id, p.kind
        scan = scan_json

        def json(ctx: Context, start: int) -> Raw:
            key = (pid, start)
            resume = ctx.scans.get(key) if resumable else None
            found = scan(ctx.text, start, kind, ctx.lenient, resume)  # type: ignore[arg-type]
            ctx.examined += found.examined
            if found.touched_end:
                ctx.eof = True
            if resumable and found.resume is not None:
                ctx.scans[key] = found.resume
            return (STATUSES[found.status], start, found.end, ())
        return json

    def _rule(self, p: Rule, resumable: bool) -> Run:
        """A rule node is kept only above tagged nodes: the chat mapper reads tags, never rule names."""
        assert p.child is not None
        child = self.function(p.child, resumable)
        name = p.name

        def rule(ctx: Context, start: int) -> Raw:
            r = child(ctx, start)
            status, begin, end, nodes = r
            if not nodes or status is FAIL:
                return r
            return (status, begin, end, (Node(name, "", begin, end, nodes, status is NEED_MORE),))
        return rule

    def _tag(self, p: Tag, resumable: bool) -> Run:
        child = self.function(p.child, resumable)
        name = p.tag

        def tag(ctx: Context, start: int) -> Raw:
            r = child(ctx, start)
            status, begin, end, nodes = r
            if status is FAIL:
                return r
            return (status, begin, end, (Node("", name, begin, end, nodes, status is NEED_MORE),))
        return tag

    def _atomic(self, p: Atomic, resumable: bool) -> Run:
        if not resumable and isinstance(p.child, Tag):
            return self._atomic_tag(p.child)
        child = self.function(p.child, resumable)

        def atomic(ctx: Context, start: int) -> Raw:
            r = child(ctx, start)
            if r[0] is NEED_MORE:
                return (NEED_MORE, r[1], r[2], ())
            return r
        return atomic

    def _atomic_tag(self, p: Tag) -> Run:
        """An atomic tag outside the resumable mode (no memo table, no frontier) as one function: the tag's
        node only when its child succeeds."""
        child = self.function(p.child, False)
        name = p.tag

        def atomic_tag(ctx: Context, start: int) -> Raw:
            r = child(ctx, start)
            status, begin, end, nodes = r
            if status is SUCCESS:
                return (SUCCESS, begin, end, (Node("", name, begin, end, nodes, False),))
            if status is NEED_MORE:
                return (NEED_MORE, begin, end, ())
            return r
        return atomic_tag


MAKERS: dict[type, str] = {
    Eps: "_eps", End: "_end", Literal: "_literal", Sequence: "_sequence", Choice: "_choice", Repeat: "_repeat",
    Peek: "_peek", Negate: "_negate", Space: "_space", Chars: "_chars", StringContent: "_string",
    Until: "_until", Rule: "_rule", Tag: "_tag", Atomic: "_atomic", Json: "_json",
}
"""The Arena method compiling each kind of parser (named, so an arena holds no bound method of itself)."""

MAX_NESTING = 800


def _nested(made: list[Run]) -> Run:
    """How a recursive rule reaches itself: the function `made[0]`, one level deeper; deeper than MAX_NESTING
    is a RecursionError, the same depth whole and streamed (a stream's runs take twice the frames of a whole
    parse's), and shallow enough for the reader's recursion limit."""

    def nested(ctx: Context, start: int) -> Raw:
        if ctx.nesting >= MAX_NESTING:
            raise RecursionError(f"a recursive rule nests deeper than {MAX_NESTING}")
        ctx.nesting += 1
        try:
            return made[0](ctx, start)
        finally:
            ctx.nesting -= 1
    return nested


def _memoized(pid: int, run: Run) -> Run:
    """`run` with the resumable context's memo table: a result that never looked at the end of the input is
    kept for the next, longer input; one that did joins the context's frontier when it keeps one."""

    def memoized(ctx: Context, start: int) -> Raw:
        key = (pid, start)
        memo = ctx.memo
        hit = memo.get(key)
        if hit is not None:
            return hit
        outer = ctx.eof
        ctx.eof = False
        result = run(ctx, start)
        if not ctx.eof:
            memo[key] = result
            ctx.eof = outer
        elif ctx.frontier is not None:
            ctx.frontier.append((pid, start, _as_result(Result, result)))
        return result
    return memoized
