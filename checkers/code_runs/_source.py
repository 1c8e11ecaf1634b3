"""Source-text questions the syntax tree cannot answer: where the parentheses were.

The tree of ``with (a as b):`` is the tree of ``with a as b:``, and an f-string's
tree forgets its quotes; but older Pythons accept only one of each pair. These
helpers look at the block's text around a node's recorded position. Node columns
are UTF-8 byte offsets, so every lookup converts them to string indexes.
"""

from __future__ import annotations

import ast
import codecs
import functools
import io
import re
import tokenize

_COMMENT = re.compile(r"#[^\n]*")
# PEP 263: a comment on line 1 or 2 that declares the source encoding.
_COOKIE = re.compile(r"[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def cookie_problem(source: str) -> tuple[int, str] | None:
    """An encoding declaration Python cannot use, as ``(block line, message)``.

    Python reads the declaration (PEP 263) before anything else and refuses to run
    a file whose encoding it does not know (``# coding: uft-8``), whatever follows;
    ``ast.parse`` of text never looks at it. Line 2 counts only after a line 1 that
    is blank or a comment, as in Python's tokenizer.
    """
    if "coding" not in source[:400]:
        return None
    for number, line in enumerate(source.split("\n", 2)[:2], start=1):
        found = _COOKIE.match(line)
        if found is not None:
            name = found.group(1)
            try:
                codecs.lookup(name)
            except LookupError:
                return number, (
                    f"declares the source encoding {name!r}, which Python does not know, "
                    "so the file does not run (SyntaxError: encoding problem); write "
                    "'# -*- coding: utf-8 -*-' or leave the line out"
                )
            return None
        if line.strip() and not line.lstrip().startswith("#"):
            return None
    return None


class BlockText:
    """The lines of one code block, addressed the way ``ast`` positions are."""

    def __init__(self, source: str) -> None:
        self.source = source

    @functools.cached_property
    def lines(self) -> list[str]:
        """The block's lines; split on first use, which most blocks never need."""
        return self.source.split("\n")

    def col(self, lineno: int, byte_col: int) -> int:
        """The string index of byte column ``byte_col`` on line ``lineno``."""
        return self._col(lineno, byte_col)

    def _col(self, lineno: int, byte_col: int) -> int:
        if not 1 <= lineno <= len(self.lines):
            return 0
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", "replace"))

    def between(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """The text from ``start`` to ``end``, each ``(lineno, byte column)``."""
        (l0, c0), (l1, c1) = start, end
        if l0 < 1 or l1 > len(self.lines) or (l0, c0) > (l1, c1):
            return ""
        first = self._col(l0, c0)
        if l0 == l1:
            return self.lines[l0 - 1][first : self._col(l1, c1)]
        parts = [self.lines[l0 - 1][first:], *self.lines[l0 : l1 - 1]]
        parts.append(self.lines[l1 - 1][: self._col(l1, c1)])
        return "\n".join(parts)

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``."""
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None:
            return ""
        return self.between((_start(node)), (end_line, end_col))

    def char_at(self, node: ast.AST) -> str:
        """The first character of ``node``'s text (``"("`` for a parenthesized tuple)."""
        lineno, col = _start(node)
        if not 1 <= lineno <= len(self.lines):
            return ""
        line = self.lines[lineno - 1]
        i = self._col(lineno, col)
        return line[i] if i < len(line) else ""

    def char_before(self, node: ast.AST) -> str:
        """The last non-blank character before ``node`` on its line or the lines above."""
        lineno, col = _start(node)
        if not 1 <= lineno <= len(self.lines):
            return ""
        text = self.lines[lineno - 1][: self._col(lineno, col)].rstrip()
        while not text and lineno > 1:
            lineno -= 1
            text = _COMMENT.sub("", self.lines[lineno - 1]).rstrip()
        return text[-1:] if text else ""


def _start(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _end(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0


def _depth(gap: str) -> int:
    gap = _COMMENT.sub("", gap)
    return gap.count("(") - gap.count(")")


def parenthesized_with(node: ast.With | ast.AsyncWith, text: BlockText) -> bool:
    """Whether ``node`` uses the parenthesized form ``with (a as b, c as d):``.

    That form needs Python 3.9; ``with (a) as b:`` and ``with (a):`` (a
    parenthesized expression, as Python 3.8's parser reads it) do not. The
    parentheses opened before the first item must still be open at its ``as`` or at
    the comma before the next item.
    """
    first = node.items[0]
    if len(node.items) == 1 and first.optional_vars is None:
        return False  # 'with (a):': one expression in parentheses
    head = text.between(_start(node), _start(first.context_expr))
    depth = _depth(head.replace("async", "", 1).replace("with", "", 1))
    if depth <= 0:
        return False
    end = _end(first.context_expr)
    if first.optional_vars is not None:
        gap = _COMMENT.sub("", text.between(end, _start(first.optional_vars)))
        depth += _depth(gap.split("as", 1)[0])  # parentheses after 'as' belong to the target
        if depth > 0:
            return True
        end = _end(first.optional_vars)
    if len(node.items) > 1:
        gap = text.between(end, _start(node.items[1].context_expr))
        depth += _depth(gap.split(",", 1)[0])
    return depth > 0


_FSTRING_TOKENS = frozenset(
    getattr(tokenize, name, -1) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
)
_PREFIX = "rRbBuUfFtT"


def _could_need_pep701(segment: str) -> bool:
    """Cheap filter: only these f-strings can use what Python 3.12 newly allowed."""
    if "{" not in segment:
        return False
    if "\\" in segment or "#" in segment or "\n" in segment:
        return True
    return segment.count('"') + segment.count("'") > 2


# The two characters that end an f-string prefix and open its quote (``f"``, ``fr'``).
_PREFIX_ENDS = tuple(c + q for c in "fFrR" for q in "'\"")


def _fstring_quotes(source: str) -> list[int]:
    """Where the quote of each f-string in ``source`` is (a few extra are harmless)."""
    found = []
    for pair in _PREFIX_ENDS:
        at = source.find(pair)
        while at != -1:
            start = at
            while start > 0 and source[start - 1] in "rRfF" and at - start < 1:
                start -= 1
            prefix = source[start : at + 1].lower()
            before = source[start - 1 : start]
            if "f" in prefix and not (before.isalnum() or before in ("_", "'", '"')):
                found.append(at + 1)
            at = source.find(pair, at + 1)
    return found


def may_need_pep701(source: str) -> bool:
    """Whether any f-string in ``source`` could use what Python 3.12 newly allowed.

    Triple-quoted f-strings always could. A one-line f-string could only if,
    inside a replacement field, its own quote, a backslash or a ``#`` appears,
    or the line ends; anything else reads the same to the old tokenizer. The
    f-strings are found with ``str.find`` (a regular expression is slower here).
    """
    for at in _fstring_quotes(source):
        quote = source[at]
        if source[at : at + 3] == quote * 3:
            return True
        if _field_breaks_old_string(source, at + 1, quote):
            return True
    return False


def _field_breaks_old_string(source: str, i: int, quote: str) -> bool:
    depth, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\n":
            return depth > 0
        if depth == 0 and c in "{}" and source[i + 1 : i + 2] == c:
            i += 2  # '{{' and '}}' are literal braces
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif depth and (c == quote or c in "\\#"):
            return True
        elif c == quote:
            return False
        elif c == "\\":
            i += 1  # an escape in the literal part
        i += 1
    return depth > 0


def fstring_problem(segment: str) -> str | None:
    """What in this f-string's source needs Python 3.12 (PEP 701), or None.

    Before 3.12 an f-string was first read as an ordinary string literal, so the
    expressions inside it could not reuse its quote, hold a backslash or a
    comment, or (in a one-line string) break the line. Only meaningful where the
    running tokenizer reports f-string parts, that is on Python 3.12 and later.
    """
    if -1 in _FSTRING_TOKENS or not _could_need_pep701(segment):
        return None
    start, middle, end = (
        getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    )
    quotes: list[str] = []  # the quotes of the f-strings we are inside, outermost first
    try:
        for tok in tokenize.generate_tokens(io.StringIO(f"({segment})").readline):
            outer = quotes[:-1] if tok.type in (middle, end) else quotes
            if outer:
                problem = _inside_expression(tok, outer)
                if problem:
                    return problem
            if tok.type == start:
                quotes.append(tok.string.lstrip(_PREFIX))
            elif tok.type == end and quotes:
                quotes.pop()
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return None


def _inside_expression(tok: tokenize.TokenInfo, outer: list[str]) -> str | None:
    if tok.type == tokenize.COMMENT:
        return "a comment inside an f-string expression"
    if tok.type in (tokenize.NL, tokenize.NEWLINE):
        if any(len(q) == 1 for q in outer):
            return "a line break inside a one-line f-string's expression"
        return None
    if "\\" in tok.string:
        return "a backslash inside an f-string expression"
    for quote in outer:
        if quote in tok.string:
            return f"the f-string's own quote ({quote}) inside one of its expressions"
    return None
