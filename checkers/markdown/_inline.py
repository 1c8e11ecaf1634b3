"""Inline Markdown helpers: code spans in one pass, entities, backslash escapes.

A code span opens with a run of n backticks and closes at the next run of exactly
n; an opener with no closer is literal text. Finding them with a lazy regular
expression backtracks into quadratic time on runs of growing length, so the runs
are listed once (by one regular expression that cannot backtrack: a run of one
character) and matched with one forward pointer per run length: linear.
"""

from __future__ import annotations

import html
import re

_ENTITY = re.compile(r"(?<!\\)&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
#: Inline code written as HTML: ``<code>``, ``<kbd>``, ``<samp>`` (no nested tags).
HTML_CODE = re.compile(r"<(code|kbd|samp)\b[^<>]*>([^<]*)</\1\s*>", re.IGNORECASE)


def blank_inline_code(text: str) -> str:
    """``text`` with every inline code span and HTML code element blanked (each
    character a space, line breaks kept): what is left is what a reader reads as
    prose. The one notion of inline code of every text checker."""
    if "`" in text:
        parts: list[str] = []
        pos = 0
        for start, end in code_spans(text):
            parts.append(text[pos:start])
            parts.append(_blank(text[start:end]))
            pos = end
        parts.append(text[pos:])
        text = "".join(parts)
    if "<" in text:
        text = HTML_CODE.sub(lambda m: _blank(m.group(0)), text)
    return text


def _blank(code: str) -> str:
    return "".join("\n" if c == "\n" else " " for c in code)


def code_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every code span in ``text``, backticks included, in order.

    A backtick run after an odd number of backslashes loses its first backtick to
    the escape; inside a span a backslash is literal, so closing runs are never
    escaped.
    """
    runs: list[tuple[int, int, int]] = []  # (position, length, length when opening)
    for m in _RUN.finditer(text):  # each run found in C: no loop over its backticks
        i, j = m.span()
        # the backslashes right before a run end there: each is counted for one run
        slashes = _slashes_before(text, i) if i and text[i - 1] == "\\" else 0
        runs.append((i, j - i, j - i - (slashes & 1)))
    by_length: dict[int, list[int]] = {}
    for k, (_, length, _) in enumerate(runs):
        by_length.setdefault(length, []).append(k)
    pointer: dict[int, int] = {}
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        pos, length, opening = runs[k]
        candidates = by_length.get(opening, [])
        p = pointer.get(opening, 0)
        while p < len(candidates) and candidates[p] <= k:
            p += 1
        pointer[opening] = p
        if opening == 0 or p == len(candidates):
            k += 1  # no closing run of that length: the backticks are literal
            continue
        close = candidates[p]
        spans.append((pos + length - opening, runs[close][0] + opening))
        k = close + 1
    return spans


_RUN = re.compile(r"`+")


def _slashes_before(text: str, i: int) -> int:
    """How many backslashes come right before ``text[i]``: counted back in growing
    steps, so a long run costs its length, never a copy of the text before it."""
    step, count = 64, 0
    while True:
        start = max(0, i - count - step)
        chunk = text[start : i - count]
        kept = chunk.rstrip("\\")
        count += len(chunk) - len(kept)
        if kept or start == 0:
            return count
        step *= 2


def _entity(m: re.Match[str]) -> str:
    return html.unescape(m.group())


def decode_entities(text: str) -> str:
    """``text`` with its character references (``&amp;``, ``&#169;``) decoded."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


def unescape(text: str) -> str:
    """Decode entities and undo backslash escapes, as CommonMark does in an info string."""
    text = decode_entities(text)
    return _ESCAPE.sub(r"\1", text) if "\\" in text else text
