"""A PEG engine with llama.cpp's parse semantics (common/peg-parser.cpp), resumable on append-only input.

Every parser is lenient as llama.cpp's chat parse is: running out of input mid-way gives NEED_MORE, not
FAIL. A streaming context memoizes every result that never looked at the end of the input (such a result
cannot change when text is appended) and resumes long scans and repetitions where they stopped, so a
re-parse after a feed only walks the parsers that touch the new end: the work per feed is bounded by the
new text plus the nesting depth at the end, not by the reply's length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import reply.json_value as json_value

SPACE = frozenset(" \t\n\v\f\r")


class Status(Enum):
    """The outcome of one parser at one position."""

    FAIL = 0
    SUCCESS = 1
    NEED_MORE = 2


@dataclass(frozen=True, eq=False)
class Node:
    """One AST node: a semantic tag (or a rule above tags) over input[start:end]."""

    rule: str
    tag: str
    start: int
    end: int
    children: tuple[Node, ...]
    is_partial: bool


@dataclass(frozen=True)
class Result:
    """A parser's result: status, span and the AST nodes it produced."""

    status: Status
    start: int
    end: int
    nodes: tuple[Node, ...] = ()


@dataclass
class Context:
    """One parse of one input; `resumable` keeps memo tables for the next, longer input."""

    text: str
    resumable: bool = False
    lenient: bool = True
    examined: int = 0
    eof: bool = False
    memo: dict[tuple[int, int], Result] = field(default_factory=dict)
    scans: dict[tuple[int, int], object] = field(default_factory=dict)


class Trie:
    """Delimiter matching at a position: complete, partial (cut by the end of input) or none."""

    NO, PARTIAL, COMPLETE = 0, 1, 2

    def __init__(self, words: list[str]) -> None:
        self.words = [w for w in words if w]
        self.firsts = frozenset(w[0] for w in self.words)

    def check_at(self, text: str, pos: int) -> tuple[int, bool]:
        """The match at `pos` and whether it looked at the end of the input."""
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
        touched = any(pos + len(w) > size for w in self.words)
        return (Trie.PARTIAL if partial else Trie.NO), touched


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
class Any(Parser):
    """Matches one character."""


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


class Builder:
    """Makes parsers; `+` style helpers mirror common_peg_parser_builder."""

    def __init__(self) -> None:
        self.parsers: list[Parser] = []
        self.rules: dict[str, Rule] = {}
        self.json_parsers: dict[str, Parser] = {}

    def add(self, parser: Parser) -> Parser:
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

    def any(self) -> Parser:
        """."""
        return self.add(Any())

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
            frac = self.seq(".", self.chars(str.isdigit, 0, -1))
            exp = self.seq(self.choice("e", "E"), self.optional(self.chars(lambda c: c in "+-", 1, 1)),
                           self.chars(str.isdigit, 0, -1))
            more = self.negate(self.chars(lambda c: c in "0123456789.eE+-", 1, 1))
            return self.seq(self.optional("-"), int_part, self.optional(frac), self.optional(exp), more)

        return self.rule("json-number", make)

    def json_string(self) -> Parser:
        """A JSON string."""
        return self.rule("json-string", lambda: self.seq('"', self.string_content('"'), '"'))

    def rules_json(self, name: str) -> Parser:
        """One of the JSON value rules (json-object, json-array, json-bool, json-null) by name."""
        kind = name.removeprefix("json-")
        if kind not in json_value.KINDS:
            raise ValueError(f"no JSON rule named {name!r}")
        if kind not in self.json_parsers:
            self.json_parsers[kind] = self.add(Json(kind))
        return self.json_parsers[kind]

    def json(self) -> Parser:
        """A JSON value (json-value: object, array, string, number, bool or null), read to any depth."""
        return self.rules_json("json-value")


class Arena:
    """A built grammar: runs the root parser over a context."""

    def __init__(self, root: Parser) -> None:
        self.root = root
        self.run = {
            Eps: self._eps, End: self._end, Literal: self._literal, Sequence: self._sequence,
            Choice: self._choice, Repeat: self._repeat, Peek: self._peek, Negate: self._negate,
            Any: self._any, Space: self._space, Chars: self._chars, StringContent: self._string,
            Until: self._until, Rule: self._rule, Tag: self._tag, Atomic: self._atomic, Json: self._json,
        }

    def parse(self, ctx: Context) -> Result:
        """Parse the whole context from its start."""
        return self.at(self.root, ctx, 0)

    def at(self, p: Parser, ctx: Context, start: int) -> Result:
        """Run one parser at one position (memoized when the context is resumable)."""
        if not ctx.resumable:
            return self.run[p.__class__](p, ctx, start)
        key = (p.id, start)
        memo = ctx.memo
        hit = memo.get(key)
        if hit is not None:
            return hit
        outer = ctx.eof
        ctx.eof = False
        result = self.run[p.__class__](p, ctx, start)
        if not ctx.eof:
            memo[key] = result
            ctx.eof = outer
        return result

    def _touch(self, ctx: Context, pos: int) -> None:
        if pos >= len(ctx.text):
            ctx.eof = True

    def _eps(self, p: Eps, ctx: Context, start: int) -> Result:
        return Result(Status.SUCCESS, start, start)

    def _end(self, p: End, ctx: Context, start: int) -> Result:
        self._touch(ctx, start)
        return Result(Status.SUCCESS if start >= len(ctx.text) else Status.FAIL, start, start)

    def _literal(self, p: Literal, ctx: Context, start: int) -> Result:
        text, lit = ctx.text, p.literal
        end = start + len(lit)
        ctx.examined += min(len(lit), max(0, len(text) - start))
        if text.startswith(lit, start):
            return Result(Status.SUCCESS, start, end)
        if end > len(text):
            ctx.eof = True
            have = text[start:]
            if lit.startswith(have) and ctx.lenient:
                return Result(Status.NEED_MORE, start, len(text))
        return Result(Status.FAIL, start, start)

    def _sequence(self, p: Sequence, ctx: Context, start: int) -> Result:
        pos = start
        nodes: list[Node] = []
        for child in p.children:
            r = self.at(child, ctx, pos)
            if r.status is Status.FAIL:
                return Result(Status.FAIL, start, r.end)
            nodes.extend(r.nodes)
            if r.status is Status.NEED_MORE:
                return Result(Status.NEED_MORE, start, r.end, tuple(nodes))
            pos = r.end
        return Result(Status.SUCCESS, start, pos, tuple(nodes))

    def _choice(self, p: Choice, ctx: Context, start: int) -> Result:
        for child in p.children:
            r = self.at(child, ctx, start)
            if r.status is not Status.FAIL:
                return r
        return Result(Status.FAIL, start, start)

    def _repeat(self, p: Repeat, ctx: Context, start: int) -> Result:
        key = (p.id, start)
        saved = ctx.scans.get(key) if ctx.resumable else None
        pos, count, nodes = saved if saved is not None else (start, 0, ())
        nodes_list = list(nodes)
        while p.max_count == -1 or count < p.max_count:
            if pos >= len(ctx.text):
                ctx.eof = True
                break
            outer = ctx.eof
            ctx.eof = False
            r = self.at(p.child, ctx, pos)
            stable = not ctx.eof
            ctx.eof = outer or ctx.eof
            if r.status is Status.SUCCESS:
                if r.end == pos:
                    break
                nodes_list.extend(r.nodes)
                pos = r.end
                count += 1
                if stable and ctx.resumable:
                    ctx.scans[key] = (pos, count, tuple(nodes_list))
                continue
            if r.status is Status.NEED_MORE:
                nodes_list.extend(r.nodes)
                return Result(Status.NEED_MORE, start, r.end, tuple(nodes_list))
            break
        if p.min_count > 0 and count < p.min_count:
            if pos >= len(ctx.text) and ctx.lenient:
                ctx.eof = True
                return Result(Status.NEED_MORE, start, pos, tuple(nodes_list))
            return Result(Status.FAIL, start, pos)
        return Result(Status.SUCCESS, start, pos, tuple(nodes_list))

    def _peek(self, p: Peek, ctx: Context, start: int) -> Result:
        r = self.at(p.child, ctx, start)
        return Result(r.status, start, start)

    def _negate(self, p: Negate, ctx: Context, start: int) -> Result:
        r = self.at(p.child, ctx, start)
        if r.status is Status.SUCCESS:
            return Result(Status.FAIL, start, start)
        if r.status is Status.NEED_MORE:
            return Result(Status.NEED_MORE, start, start)
        return Result(Status.SUCCESS, start, start)

    def _any(self, p: Any, ctx: Context, start: int) -> Result:
        if start >= len(ctx.text):
            ctx.eof = True
            return Result(Status.NEED_MORE if ctx.lenient else Status.FAIL, start, start)
        ctx.examined += 1
        return Result(Status.SUCCESS, start, start + 1)

    def _space(self, p: Space, ctx: Context, start: int) -> Result:
        text = ctx.text
        pos = start
        while pos < len(text) and text[pos] in SPACE:
            pos += 1
        ctx.examined += pos - start + 1
        self._touch(ctx, pos)
        return Result(Status.SUCCESS, start, pos)

    def _chars(self, p: Chars, ctx: Context, start: int) -> Result:
        text = ctx.text
        pos, count = start, 0
        while p.max_count == -1 or count < p.max_count:
            if pos >= len(text):
                ctx.eof = True
                if count >= p.min_count:
                    return Result(Status.SUCCESS, start, pos)
                return Result(Status.NEED_MORE if ctx.lenient else Status.FAIL, start, pos)
            ctx.examined += 1
            if not p.accept(text[pos]):
                break
            pos += 1
            count += 1
        if count < p.min_count:
            return Result(Status.FAIL, start, pos)
        return Result(Status.SUCCESS, start, pos)

    def _string(self, p: StringContent, ctx: Context, start: int) -> Result:
        text = ctx.text
        key = (p.id, start)
        pos = ctx.scans.get(key, start) if ctx.resumable else start
        size = len(text)
        delim = p.delimiter
        while pos < size:
            ctx.examined += 1
            c = text[pos]
            if c == delim:
                return Result(Status.SUCCESS, start, pos)
            if c == "\\":
                if pos + 1 >= size:
                    ctx.eof = True
                    return Result(Status.NEED_MORE if ctx.lenient else Status.FAIL, start, pos)
                e = text[pos + 1]
                if e == delim or e in '\\/bfnrt':
                    pos += 2
                elif e == "u":
                    digits = text[pos + 2:pos + 6]
                    if not all(d in "0123456789abcdefABCDEF" for d in digits):
                        return Result(Status.FAIL, start, start)
                    if len(digits) < 4:
                        ctx.eof = True
                        return Result(Status.NEED_MORE if ctx.lenient else Status.FAIL, start, pos)
                    pos += 6
                else:
                    return Result(Status.FAIL, start, start)
            else:
                pos += 1
            if ctx.resumable:
                ctx.scans[key] = pos
        ctx.eof = True
        return Result(Status.NEED_MORE if ctx.lenient else Status.FAIL, start, pos)

    def _until(self, p: Until, ctx: Context, start: int) -> Result:
        text = ctx.text
        key = (p.id, start)
        pos = ctx.scans.get(key, start) if ctx.resumable else start
        size = len(text)
        trie = p.trie
        firsts = trie.firsts
        if not trie.words:
            ctx.examined += size - pos
            ctx.eof = True
            return Result(Status.NEED_MORE if ctx.lenient else Status.SUCCESS, start, size)
        while pos < size:
            ctx.examined += 1
            if text[pos] in firsts:
                match, touched = trie.check_at(text, pos)
                if touched:
                    ctx.eof = True
                if match != Trie.NO:
                    return Result(Status.SUCCESS, start, pos)
                if touched:
                    pos += 1
                    continue
            pos += 1
            if ctx.resumable and not ctx.eof:
                ctx.scans[key] = pos
        ctx.eof = True
        return Result(Status.NEED_MORE if ctx.lenient else Status.SUCCESS, start, size)

    def _json(self, p: Json, ctx: Context, start: int) -> Result:
        key = (p.id, start)
        resume = ctx.scans.get(key) if ctx.resumable else None
        found = json_value.scan(ctx.text, start, p.kind, ctx.lenient, resume)  # type: ignore[arg-type]
        ctx.examined += found.examined
        if found.touched_end:
            ctx.eof = True
        if ctx.resumable and found.resume is not None:
            ctx.scans[key] = found.resume
        return Result(Status(found.status), start, found.end)

    def _node(self, ctx: Context, r: Result, rule: str, tag: str) -> Result:
        if r.status is Status.FAIL:
            return r
        node = Node(rule, tag, r.start, r.end, r.nodes, r.status is Status.NEED_MORE)
        return Result(r.status, r.start, r.end, (node,))

    def _rule(self, p: Rule, ctx: Context, start: int) -> Result:
        """A rule node is kept only above tagged nodes: the chat mapper reads tags, never rule names."""
        assert p.child is not None
        r = self.at(p.child, ctx, start)
        if not r.nodes:
            return r
        return self._node(ctx, r, p.name, "")

    def _tag(self, p: Tag, ctx: Context, start: int) -> Result:
        return self._node(ctx, self.at(p.child, ctx, start), "", p.tag)

    def _atomic(self, p: Atomic, ctx: Context, start: int) -> Result:
        r = self.at(p.child, ctx, start)
        if r.status is Status.NEED_MORE:
            return Result(r.status, r.start, r.end)
        return r
