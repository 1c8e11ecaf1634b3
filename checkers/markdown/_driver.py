"""The scanner's driver: every line goes to the scanner, plain runs in one step.

Inside a top-level paragraph, fence or HTML block, most lines can only be more of
the same. The next line that could matter is found by a regular-expression search
over the whole text (C speed, linear), and the lines before it are handed over at
once; the per-line machinery in :mod:`._scanner` sees only the rest.
"""

from __future__ import annotations

import re

from . import _starts as st
from ._opening import SPECIAL
from ._scanner import Scanner
from ._state import FENCE, HTML, PARA, TABLE, Leaf

# The line ends before lines that may be more than plain text after a top-level
# paragraph line: those opening with a blank, a mark that can start a block or
# interrupt a paragraph (a fence, ``[^`` of a footnote, ``1.``), or nothing at all.
# Each pattern starts with a literal line end, which the regular expression engine
# finds at C speed (a "^" with MULTILINE is tried at every position).
_NOT_PLAIN = re.compile(r"\n(?:[ \t>#<=\-_*+|:\n]|```|~~~|\[\^|\$\$|1[.)])|\n\Z")
_BACKTICK_LINE = re.compile(r"\n {0,3}```")
_TILDE_LINE = re.compile(r"\n {0,3}~~~")
_BLANK_LINE = re.compile(r"\n[ \t]*+(?:\n|\Z)")
_NOT_BLANK = re.compile(r"[^ \t\n]")
SKIP_BLANKS = True
"""Skip runs of blank lines that change nothing in one step; tests turn it off to compare."""
_SPECIAL_OR_BLANK = SPECIAL | frozenset(" \t")
_YAML_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")


def run(scanner: Scanner, text: str, start: int) -> None:
    """Feed every line from ``start`` on (``text`` is the lines joined by ``\n``).

    Where nothing but plain lines can follow (inside a top-level paragraph, fence
    or HTML block), the next line that matters is found by a search over the text,
    and the lines before it are taken in one step: the C-speed search does what
    ordinary documents need, and the per-line machinery only sees the rest.
    """
    lines = scanner.lines
    n = len(lines)
    i = start
    pos = sum(len(line) + 1 for line in lines[:start])
    while i < n:
        leaf = scanner.leaf
        if leaf is not None and not scanner.kinds:
            j, q = _skip(scanner, text, pos, i, leaf)
            if j > i:
                i, pos = j, q
                continue
        line = lines[i]
        if (
            leaf is None
            and scanner.kinds
            and SKIP_BLANKS
            and _idle(scanner)
            and not line.strip(" \t")
        ):
            # list items and footnotes go on over blank lines, and with no leaf open a
            # blank line changes nothing: skip the run of them in one step
            m = _NOT_BLANK.search(text, pos)
            if m is None:
                break
            q = text.rfind("\n", pos, m.start()) + 1
            i, pos = i + text.count("\n", pos, q), q
            continue
        if scanner.kinds or (line and line[0] in _SPECIAL_OR_BLANK):
            scanner.feed(i, line)
        elif not line:  # a blank line at the top level
            if leaf is None or leaf.kind in (PARA, TABLE):
                scanner.close_leaf()
            else:
                scanner.feed(i, line)
        elif leaf is None:  # plain text at the top level opens a paragraph
            scanner.paragraph(i, line)
        else:
            scanner.feed(i, line)
        i += 1
        pos += len(line) + 1


def _idle(scanner: Scanner) -> bool:
    """Whether a blank line leaves the open containers as they are.

    So it does when none is a block quote (a blank line ends a quote) and the
    innermost holds something (a blank line ends a list item that is still empty).
    """
    return scanner.top_has_child and not scanner.quote_starts


def _skip(scanner: Scanner, text: str, pos: int, i: int, leaf: Leaf) -> tuple[int, int]:
    """The next line (and its offset) the top-level ``leaf`` cannot take as plain text."""
    kind = leaf.kind
    if kind == PARA:
        m = _NOT_PLAIN.search(text, pos - 1)
    elif kind == FENCE and not leaf.offset:
        m = (_BACKTICK_LINE if leaf.char == "`" else _TILDE_LINE).search(text, pos - 1)
    elif kind == HTML and leaf.end == st.HTML_BLANK_ENDS:
        m = _BLANK_LINE.search(text, pos - 1)
    elif kind == HTML and leaf.end != "raw":
        at = text.find(leaf.end, pos)
        q = text.rfind("\n", 0, at) + 1 if at >= 0 else len(text) + 1
        return (i + text.count("\n", pos, q) if at >= 0 else len(scanner.lines)), q
    else:
        return i, pos
    q = m.start() + 1 if m is not None else len(text) + 1
    j = i + text.count("\n", pos, q) if m is not None else len(scanner.lines)
    if j > i and (kind in (PARA, FENCE) or leaf.end == st.HTML_BLANK_ENDS):
        leaf.lines.extend(scanner.lines[i:j])
    return j, q


def front_matter_end(lines: list[str]) -> int:
    """The number of leading lines that are YAML front matter (``---`` ... ``---``), or 0.

    Only a block that opens the document, closes with ``---`` or ``...`` and holds a
    ``key:`` line counts, so a rule followed by a setext heading stays Markdown.
    """
    if not lines or lines[0].rstrip() != "---":
        return 0
    has_key = False
    for j in range(1, len(lines)):
        line = lines[j]
        if line.rstrip() in ("---", "..."):
            return j + 1 if has_key else 0
        if not has_key and line[:1] in _YAML_KEY_CHARS:
            colon = line.find(":")
            has_key = colon > 0 and (colon + 1 == len(line) or line[colon + 1] in " \t")
    return 0
