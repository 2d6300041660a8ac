"""Obsidian Bases' expression language, parsed: text in, a small tree out (pure; see
:mod:`notegate.vault.basexpr` for the evaluator and the bounds' reasons).

The grammar is the one Obsidian's help documents ("Bases syntax"): JavaScript-like literals, names,
``.field``, ``[index]``, ``f(args)`` and ``x.method(args)``, unary ``! - +``, ``* / %``, ``+ -``,
comparisons, ``&& ||``.  An expression is at most :data:`MAX_EXPR_CHARS` characters and nests (parentheses,
unary operators, arguments) at most :data:`MAX_DEPTH` deep; a chain of one precedence (``a + b + c …``,
``a.b.c…``) is one node holding a list, so the tree's depth never grows with the text's length and parsing
is linear (one tokenizer pass, then one look at each token).  Only :class:`ExprError` escapes.
"""

from __future__ import annotations

import re

from notegate.errors import NotegateError

__all__ = ["MAX_DEPTH", "MAX_EXPR_CHARS", "ExprError", "Node", "Unsupported", "parse"]

MAX_EXPR_CHARS = 64 << 10
MAX_DEPTH = 32


class ExprError(NotegateError):
    """An expression that cannot be parsed or evaluated (the only error the Bases modules raise for one).
    Caught by the view, which shows it as a note inside the base: it never refuses the page."""

    rule = "base-expression-invalid"


class Unsupported(ExprError):
    """Syntax or a function Obsidian has that this page does not evaluate."""

    rule = "base-expression-unsupported"


#: A node: ("lit", v) ("name", s) ("call", name, args) ("chain", base, steps) ("unary", op, x)
#: ("binary", level, first, [(op, x), …]) ("list", items) ("object", pairs).  Steps: ("get", name),
#: ("index", node), ("method", name, args).
Node = tuple

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    | (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
    | (?P<op>&&|\|\||==|!=|>=|<=|[-+*/%<>!().,\[\]{}:])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
#: Binary precedence levels, loosest first (JavaScript's order).
_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))
_KEYWORDS = {"true": True, "false": False, "null": None}


def _tokens(text: str) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    pos, end = 0, len(text)
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            rest = text[pos:].strip()
            if not rest:
                break
            raise ExprError(f"unexpected character {rest[0]!r}")
        pos = match.end()
        kind = match.lastgroup
        raw = match.group(kind) if kind else ""
        if kind == "num":
            number = float(raw)
            out.append(("lit", int(number) if number.is_integer() and abs(number) < 2**53 else number))
        elif kind == "str":
            out.append(("lit", _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), raw[1:-1])))
        elif kind == "name":
            out.append(("lit", _KEYWORDS[raw]) if raw in _KEYWORDS else ("name", raw))
        else:
            out.append(("op", raw))
    out.append(("end", None))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0

    def peek(self, value: str | None = None) -> bool:
        kind, raw = self.tokens[self.at]
        return kind == "op" and (value is None or raw == value)

    def take(self) -> tuple[str, object]:
        token = self.tokens[self.at]
        if token[0] != "end":
            self.at += 1
        return token

    def expect(self, op: str) -> None:
        kind, raw = self.take()
        if kind != "op" or raw != op:
            raise ExprError(f"expected {op!r}")

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExprError(f"nested more than {MAX_DEPTH} deep")

    def expr(self, level: int = 0) -> Node:
        if level == len(_LEVELS):
            return self.unary()
        first = self.expr(level + 1)
        rest: list[tuple[str, Node]] = []
        while self.tokens[self.at][0] == "op" and self.tokens[self.at][1] in _LEVELS[level]:
            op = str(self.take()[1])
            rest.append((op, self.expr(level + 1)))
        return ("binary", level, first, rest) if rest else first

    def nested(self) -> Node:
        self.deeper()
        node = self.expr()
        self.depth -= 1
        return node

    def unary(self) -> Node:
        if self.peek("!") or self.peek("-") or self.peek("+"):
            op = str(self.take()[1])
            self.deeper()
            node = ("unary", op, self.unary())
            self.depth -= 1
            return node
        return self.postfix()

    def args(self, close: str) -> list[Node]:
        items: list[Node] = []
        while not self.peek(close):
            items.append(self.nested())
            if not self.peek(","):
                break
            self.take()
        self.expect(close)
        return items

    def postfix(self) -> Node:
        base = self.primary()
        steps: list[tuple] = []
        while True:
            if self.peek("."):
                self.take()
                kind, name = self.take()
                if kind != "name" and not (kind == "lit" and isinstance(name, bool | None)):
                    raise ExprError("expected a name after '.'")
                name = name if kind == "name" else str(name).lower()
                if self.peek("("):
                    self.take()
                    steps.append(("method", name, self.args(")")))
                else:
                    steps.append(("get", name))
            elif self.peek("["):
                self.take()
                steps.append(("index", self.nested()))
                self.expect("]")
            else:
                return ("chain", base, steps) if steps else base

    def primary(self) -> Node:
        kind, raw = self.take()
        if kind == "lit":
            return ("lit", raw)
        if kind == "name":
            if self.peek("("):
                self.take()
                return ("call", raw, self.args(")"))
            return ("name", raw)
        if raw == "(":
            node = self.nested()
            self.expect(")")
            return node
        if raw == "[":
            self.deeper()
            node = ("list", self.args("]"))
            self.depth -= 1
            return node
        if raw == "{":
            return self.object()
        if raw == "/":
            raise Unsupported("regular expressions are not evaluated on this page")
        raise ExprError("expected a value" if kind == "end" else f"unexpected {raw!r}")

    def object(self) -> Node:
        self.deeper()
        pairs: list[tuple[str, Node]] = []
        while not self.peek("}"):
            kind, key = self.take()
            if kind not in ("lit", "name"):
                raise ExprError("expected a key")
            self.expect(":")
            pairs.append((str(key), self.nested()))
            if not self.peek(","):
                break
            self.take()
        self.expect("}")
        self.depth -= 1
        return ("object", pairs)


def parse(text: object) -> Node:
    """``text`` as a tree, or :class:`ExprError` (bounded: see the module docstring)."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ExprError("an expression is a string")
    text = str(text)
    if len(text) > MAX_EXPR_CHARS:
        raise ExprError(f"longer than {MAX_EXPR_CHARS} characters")
    parser = _Parser(text)
    node = parser.expr()
    if parser.tokens[parser.at][0] != "end":
        raise ExprError(f"unexpected {parser.tokens[parser.at][1]!r}")
    return node
