"""Line helpers for the text and JSON checkers, over the one block scanner.

Line numbers are 1-based in messages and 0-based as indices; ``\\r\\n`` and a lone
``\\r`` end a line like ``\\n`` (see :func:`split_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import fences, scan, split_lines

__all__ = ["Heading", "code_mask", "first_block", "headings", "line_of", "quote", "split_lines"]
from ._model import Fence

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
