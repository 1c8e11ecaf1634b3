"""Line helpers for the text and JSON checkers, over the one block scanner.

Line numbers are 1-based in messages and 0-based as indices; ``\\r\\n`` and a lone
``\\r`` end a line like ``\\n`` (see :func:`split_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import fences, scan, split_lines
from ._inline import blank_inline_code
from ._model import Fence

__all__ = [
    "Heading",
    "code_mask",
    "first_block",
    "headings",
    "line_of",
    "prose_lines",
    "quote",
    "split_lines",
]

QUOTE_LIMIT = 80


def quote(fragment: str, limit: int = QUOTE_LIMIT) -> str:
    """``fragment`` stripped, shortened to ``limit`` characters, in double quotes."""
    flat = " ".join(fragment.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return f'"{flat}"'


def line_of(text: str, offset: int) -> int:
    """The 1-based line of character ``offset`` in ``text``, counted as in :func:`split_lines`."""
    return len(split_lines(text[:offset]))


def code_mask(text: str) -> list[bool]:
    """For each line of ``text``, whether it belongs to a fenced block (fence lines included)."""
    count = len(split_lines(text))
    mask = [False] * count
    for f in fences(text):
        for k in range(f.line - 1, min(f.end, count)):
            mask[k] = True
    return mask


def prose_lines(text: str) -> dict[int, str]:
    """The prose of ``text`` by 0-based line: what ``sentence_len`` reads, the one notion
    of "not code" of every text checker. Fenced and indented code, math, ``<pre>``
    blocks, HTML comments, front matter and link reference definitions are left
    out; inline code (backticks, ``<code>``) is blanked; the cells of a table row
    share their line."""
    out: dict[int, str] = {}
    for unit in scan(text).units:
        for k, line in enumerate(blank_inline_code(unit.text).split("\n")):
            index = unit.line - 1 + k
            out[index] = f"{out[index]} | {line}" if index in out else line
    return out


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: 0-based line index, level 1-6 and its text."""

    index: int
    level: int
    text: str


def headings(text: str) -> list[Heading]:
    """The ATX (``## Title``) and setext (``Title`` over ``===``) headings, code left out."""
    return [
        Heading(u.line - 1, u.level, " ".join(u.text.split()))
        for u in scan(text).units
        if u.kind == "heading"
    ]


def first_block(text: str, langs: Sequence[str]) -> Fence | None:
    """The first fenced block whose language is one of ``langs``."""
    return next((f for f in fences(text) if f.language in langs), None)
