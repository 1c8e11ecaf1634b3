"""Just enough Markdown structure for the text checkers: lines, fences, headings.

This is deliberately not a Markdown parser. It finds fenced code blocks much as
CommonMark does, also when they sit in a list item (so a ``# comment`` inside a
Python block is never taken for a heading), and ATX / setext headings outside them.
Line numbers are 1-based; ``\\r\\n`` and a lone ``\\r`` end a line like ``\\n``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Fences may be indented (inside a list item) or follow a list marker ("- ```python").
_OPEN_FENCE = re.compile(r"^([ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?)(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t](.*))?$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# A line that cannot be the text of a setext heading (list item, quote, table, rule...).
_NOT_PARAGRAPH = re.compile(r"^ {0,3}(?:[-+*>|#]|\d{1,9}[.)](?:\s|$)|```|~~~|={3,}|-{3,})")

QUOTE_LIMIT = 80


def split_lines(text: str) -> list[str]:
    """The text's lines, with ``\\r\\n`` and lone ``\\r`` read as line ends."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def quote(fragment: str, limit: int = QUOTE_LIMIT) -> str:
    """``fragment`` stripped, shortened to ``limit`` characters, in double quotes."""
    flat = " ".join(fragment.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return f'"{flat}"'


def line_of(text: str, offset: int) -> int:
    """The 1-based line of character ``offset`` in ``text``, counted as in :func:`split_lines`."""
    return len(split_lines(text[:offset]))


@dataclass(frozen=True)
class Fence:
    """A fenced code block: ``start`` is the opening fence's 0-based line index.

    ``end`` is the closing fence's index, or the number of lines when the block is
    never closed (CommonMark runs it to the end of the document).
    """

    start: int
    end: int
    lang: str
    body: tuple[str, ...]
    closed: bool


def fences(lines: Sequence[str]) -> list[Fence]:
    """Every fenced code block in ``lines``, in order."""
    found: list[Fence] = []
    i = 0
    while i < len(lines):
        m = _OPEN_FENCE.match(lines[i])
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        marker = m.group(2)
        close = re.compile(rf"^[ \t]*{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
        words = m.group(3).split()
        lang = words[0].lower() if words else ""
        j = i + 1
        while j < len(lines) and close.match(lines[j]) is None:
            j += 1
        found.append(Fence(i, j, lang, tuple(lines[i + 1 : j]), j < len(lines)))
        i = j + 1
    return found


def code_mask(lines: Sequence[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced block (fence lines included)."""
    mask = [False] * len(lines)
    for f in fences(lines):
        for k in range(f.start, min(f.end + 1, len(lines))):
            mask[k] = True
    return mask


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: 0-based line index, level 1-6 and its text."""

    index: int
    level: int
    text: str


def _atx_text(rest: str) -> str:
    """An ATX heading's text without its optional closing ``###``.

    Done with string methods: the regex way backtracks quadratically on a line of
    many spaces and tabs, and a draft may contain anything.
    """
    text = rest.strip(" \t")
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare.rstrip(" \t")
    return text.strip()


def headings(lines: Sequence[str]) -> list[Heading]:
    """The ATX (``## Title``) and setext (``Title`` over ``===``) headings outside code."""
    in_code = code_mask(lines)
    found: list[Heading] = []
    for i, line in enumerate(lines):
        if in_code[i]:
            continue
        atx = _ATX.match(line)
        if atx is not None:
            found.append(Heading(i, len(atx.group(1)), _atx_text(atx.group(2) or "")))
            continue
        under = _SETEXT_UNDERLINE.match(line)
        if under is None or i == 0 or in_code[i - 1]:
            continue
        above = lines[i - 1]
        if (
            above.strip()
            and _NOT_PARAGRAPH.match(above) is None
            and not above.startswith(("    ", "\t"))
        ):
            level = 1 if under.group(1)[0] == "=" else 2
            found.append(Heading(i - 1, level, above.strip()))
    return sorted(found, key=lambda h: h.index)


def first_block(lines: Sequence[str], langs: Sequence[str]) -> Fence | None:
    """The first fenced block whose language tag is one of ``langs``."""
    for f in fences(lines):
        if f.lang in langs:
            return f
    return None
