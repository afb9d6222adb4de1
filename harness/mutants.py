"""One-change mutants of a parser's source: a small operator set over Python's AST, a line-level operator set
for other languages, each mutant applied to a copy of the source, never to the original."""

from __future__ import annotations

import ast
import difflib
import dis
import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import CodeType

SYNTAX_DIRECTORY = "syntaxes"
"""The folder of a parser's source whose modules each serve the reply syntax they are named after."""
COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BINARY_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
}
TEXT_OPERATORS: tuple[tuple[str, str, str], ...] = (
    ("compare", r"==", "!="),
    ("compare", r"!=", "=="),
    ("compare", r"<=", ">"),
    ("compare", r">=", "<"),
    ("boolean", r"&&", "||"),
    ("boolean", r"\|\|", "&&"),
    ("constant", r"\btrue\b", "false"),
    ("constant", r"\bfalse\b", "true"),
    ("constant", r"\b1\b", "2"),
    ("constant", r"\b0\b", "1"),
)


@dataclass(frozen=True)
class Mutant:
    """One change to one file: where, which operator, the source replaced and what replaces it."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    operator: str
    original: str
    replacement: str
    anchor: str = ""
    nth: int = 0

    @property
    def id(self) -> str:
        """An id that survives edits elsewhere in the file: a hash of the file, the text of the line the change
        starts on, the operator, the change, and how many alike changes come before it on such lines."""
        key = "\0".join(
            (self.file, self.anchor, self.operator, self.original, self.replacement, str(self.nth))
        )
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        """The mutant as a person reads it: `file:line operator: 'before' -> 'after'`."""
        return f"{self.file}:{self.line} {self.operator}: {short(self.original)} -> {short(self.replacement)}"

    def apply(self, source: str) -> str:
        """The file's source with this change made."""
        lines = source.splitlines(keepends=True)
        start = offset(lines, self.line, self.column)
        end = offset(lines, self.end_line, self.end_column)
        if source[start:end] != self.original:
            raise ValueError(
                f"{self.file}:{self.line}: the source changed, {self.original!r} is no longer there"
            )
        return source[:start] + self.replacement + source[end:]

    def diff(self, source: str) -> str:
        """A unified diff of the change."""
        return "".join(
            difflib.unified_diff(
                source.splitlines(keepends=True),
                self.apply(source).splitlines(keepends=True),
                f"a/{self.file}",
                f"b/{self.file}",
                n=1,
            )
        )


def short(text: str, width: int = 60) -> str:
    """A one-line, shortened repr of a piece of source."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[: width - 1] + "…")


def offset(lines: list[str], line: int, column: int) -> int:
    """The character offset of a 1-based line and a UTF-8 byte column, as the AST gives them."""
    before = sum(len(text) for text in lines[: line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8", errors="ignore"))


def skipped_nodes(tree: ast.AST) -> set[int]:
    """Nodes not worth mutating: docstrings, annotations, f-string parts (their positions are unreliable)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            skipped.update(id(inner) for inner in ast.walk(first))
        annotations = [getattr(node, "annotation", None), getattr(node, "returns", None)]
        if isinstance(node, ast.JoinedStr):
            annotations.append(node)
        for annotation in annotations:
            if annotation is not None:
                skipped.update(id(inner) for inner in ast.walk(annotation))
    return skipped


def expression_changes(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """The operator name and the mutated expression for each change of one expression node."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE_SWAPS:
        swapped = COMPARE_SWAPS[type(node.ops[0])]()
        yield "compare", ast.Compare(node.left, [swapped], node.comparators)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolean", ast.BoolOp(other, node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "negation", node.operand
    elif isinstance(node, ast.BinOp) and type(node.op) in BINARY_SWAPS:
        yield "arithmetic", ast.BinOp(node.left, BINARY_SWAPS[type(node.op)](), node.right)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "constant", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        yield "constant", ast.Constant(node.value + 1)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        yield "constant", ast.Constant("")


def statement_changes(node: ast.stmt) -> Iterator[tuple[str, str]]:
    """The operator name and the replacement source for each change of one statement."""
    if isinstance(node, (ast.If, ast.While)):
        yield "condition", f"not ({ast.unparse(node.test)})"
    elif isinstance(node, (ast.Break, ast.Continue)) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    ):
        yield "deletion", "pass"
    elif isinstance(node, ast.Return) and node.value is not None:
        yield "return", "return None"


def anchored(mutants: list[Mutant], source: str) -> list[Mutant]:
    """The mutants in source order, each with the text of its first line and its rank among alike ones."""
    lines = source.splitlines()
    seen: Counter[tuple[str, str, str, str]] = Counter()
    ordered = []
    for mutant in sorted(mutants, key=lambda m: (m.line, m.column, m.operator, m.replacement)):
        anchor = lines[mutant.line - 1].strip()
        alike = (anchor, mutant.operator, mutant.original, mutant.replacement)
        ordered.append(replace(mutant, anchor=anchor, nth=seen[alike]))
        seen[alike] += 1
    return ordered


def python_mutants(file: str, source: str) -> list[Mutant]:
    """Every mutant of a Python file, in source order."""
    tree = ast.parse(source)
    skipped = skipped_nodes(tree)
    lines = source.splitlines(keepends=True)
    found: list[Mutant] = []

    def add(node: ast.expr | ast.stmt, operator: str, replacement: str) -> None:
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = offset(lines, node.lineno, node.col_offset)
        end = offset(lines, node.end_lineno, node.end_col_offset)
        original = source[start:end]
        if replacement != original:
            found.append(
                Mutant(
                    file,
                    node.lineno,
                    node.col_offset,
                    node.end_lineno,
                    node.end_col_offset,
                    operator,
                    original,
                    replacement,
                )
            )

    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.expr):
            for operator, changed in expression_changes(node):
                add(node, operator, f"({ast.unparse(changed)})")
        if isinstance(node, (ast.If, ast.While)):
            for operator, replacement in statement_changes(node):
                add(node.test, operator, replacement)
        elif isinstance(node, ast.stmt):
            for operator, replacement in statement_changes(node):
                add(node, operator, replacement)
    return anchored(found, source)


def text_mutants(file: str, source: str) -> list[Mutant]:
    """Every mutant of a file in another language: one token changed by a line-level operator."""
    found: list[Mutant] = []
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.lstrip()
        if stripped.startswith(("//", "#", "/*", "*")):
            continue
        for operator, pattern, replacement in TEXT_OPERATORS:
            for match in re.finditer(pattern, line):
                column = len(line[: match.start()].encode("utf-8"))
                end = len(line[: match.end()].encode("utf-8"))
                found.append(Mutant(file, number, column, number, end, operator, match.group(), replacement))
    return anchored(found, source)


def mutants_of(root: Path, file: Path) -> list[Mutant]:
    """The mutants of one file under `root`: AST operators for Python, line operators otherwise."""
    source = file.read_text(encoding="utf-8")
    relative = file.relative_to(root).as_posix()
    return python_mutants(relative, source) if file.suffix == ".py" else text_mutants(relative, source)


def equivalent_by_bytecode(mutant: Mutant, source: str) -> bool:
    """Whether a Python mutant compiles to the same code as the original (a change the compiler folds away)."""
    if not mutant.file.endswith(".py"):
        return False
    try:
        mutated = compile(mutant.apply(source), mutant.file, "exec")
    except SyntaxError:
        return False
    return code_fingerprint(mutated) == code_fingerprint(compile(source, mutant.file, "exec"))


def code_fingerprint(code: CodeType) -> tuple[object, ...]:
    """A code object's instructions with the values they use, nested code included, without line numbers."""
    return tuple(
        (
            instruction.opname,
            code_fingerprint(instruction.argval)
            if isinstance(instruction.argval, CodeType)
            else (type(instruction.argval).__name__, repr(instruction.argval)),
        )
        for instruction in dis.get_instructions(code)
    )


def enclosing_function(source: str, line: int) -> int | None:
    """The first line (its first decorator's, as a code object records it) of the innermost function holding
    `line`, or None at module or class level or when the source is not Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            if node.lineno < line <= (node.end_lineno or node.lineno) and (found is None or first > found[0]):
                found = (first, node.lineno)
    return None if found is None else found[0]


def copy_environment(copy_root: Path, project: Path) -> dict[str, str]:
    """The environment of a run: the parser copied under `copy_root` imported first, then the project."""
    env = dict(os.environ)
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(copy_root), str(project), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["CHATPARITY_MUTANT_DIR"] = str(copy_root)
    return env
