"""The fenced blocks of a plain document, found from its fence marks alone.

Most drafts keep every fence at the left margin and use no block quotes, HTML
blocks or math around them. For those, the block scanner's answer is fixed by the
lines holding three backticks or tildes, which ``str.find`` lists at C speed; the
text between two of them is one slice. :func:`plain_fences` answers for such a
draft and returns None for any other, which then goes through the full scanner
(a test checks, on generated Markdown, that both agree wherever this one answers).
"""

from __future__ import annotations

import re

from ._inline import unescape
from ._model import Fence, language_of

# a line opening an HTML block or math; "\n" first, not "(?:^|\n)": a pattern that may
# match at any position is tried at every one (slow), a literal line end is found at
# C speed, and the first line is checked on its own
_HTML_OR_MATH = re.compile(r"\n {0,3}(?:<|\$\$)")
_FIRST_HTML_OR_MATH = re.compile(r" {0,3}(?:<|\$\$)")
_PLAIN_START = frozenset("`~")
_NOT_PLAIN = frozenset(" \t>#<=-_*+[$|:0123456789")


def _mark_lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line holding three backticks or tildes, in order."""
    found: list[int] = []
    for mark in ("```", "~~~"):
        if mark[0] not in text:
            continue  # one character is found at memchr speed; three are not
        at = text.find(mark)
        while at != -1:
            found.append(at)
            at = text.find(mark, at + 3)
    found.sort()
    lines: list[tuple[int, int]] = []
    end = -1
    for at in found:
        if at < end:
            continue  # another mark on a line already listed
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end == -1:
            end = len(text)
        lines.append((start, end))
    return lines


def plain_fences(text: str) -> tuple[Fence, ...] | None:
    """The fenced blocks of ``text`` (line ends already ``\\n``), or None if it is not plain.

    Plain: no front matter, no line opening an HTML block or ``$$`` math, and every
    line holding a fence mark opens with a backtick or tilde (a fence at the margin,
    which no container can hold) or with a character that starts only a paragraph.
    """
    if text.startswith("---") or _html_or_math(text):
        return None
    marks = _mark_lines(text)
    for start, _ in marks:
        if text[start] in _NOT_PLAIN:
            return None
    found: list[Fence] = []
    counted = line = 0  # the 0-based number of the line at offset ``counted``
    k = 0
    while k < len(marks):
        start, end = marks[k]
        k += 1
        opening = _opening(text, start, end)
        if opening is None:
            continue
        length, info = opening
        char = text[start]
        line += text.count("\n", counted, start)
        counted = start
        close = k
        while close < len(marks) and not _closes(text, marks[close], char, length):
            close += 1
        if close < len(marks):
            body = text[end + 1 : marks[close][0]]
            end_line = line + text.count("\n", start, marks[close][0])
            k = close + 1
        else:
            body = text[end + 1 :]
            if body and not body.endswith("\n"):
                body += "\n"
            end_line = line + text.count("\n", start) - text.endswith("\n")
            k = len(marks)
        found.append(_fence(line, end_line, info, body, close < len(marks)))
    return tuple(found)


def _html_or_math(text: str) -> bool:
    """Whether a line of ``text`` opens (at most 3 spaces in) with ``<`` or ``$$``."""
    if "<" not in text and ("$" not in text or "$$" not in text):  # "$" alone: memchr
        return False
    return bool(_FIRST_HTML_OR_MATH.match(text) or _HTML_OR_MATH.search(text))


def _opening(text: str, start: int, end: int) -> tuple[int, str] | None:
    """``(marker length, info)`` when the line at ``start`` opens a fence."""
    char = text[start]
    if char not in _PLAIN_START:
        return None
    i = start
    while i < end and text[i] == char:
        i += 1
    if i - start < 3:
        return None
    info = text[i:end]
    if char == "`" and "`" in info:
        return None
    return i - start, info.strip(" \t")


def _closes(text: str, mark: tuple[int, int], char: str, length: int) -> bool:
    start, end = mark
    i = start
    while i < end and text[i] == char:
        i += 1
    return i - start >= length and not text[i:end].strip(" \t")


def _fence(line: int, end_line: int, info: str, body: str, closed: bool) -> Fence:
    if "\\" in info or "&" in info:
        info = unescape(info)
    return Fence(line + 1, end_line + 1, language_of(info) if info else "", info, body, closed)
