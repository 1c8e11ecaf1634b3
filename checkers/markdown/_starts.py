"""Recognisers for the lines that start a Markdown block, after CommonMark 0.31.2.

Each takes the line and the index of its first non-blank character and answers
without looking at other lines. Every pattern here is anchored and has no nested or
adjacent unbounded repeats (possessive where a retry could rescan), so each runs in
time linear in the line, whatever the line holds.
"""

from __future__ import annotations

import re

QUOTE_RUN = re.compile(">+")
_ATX = re.compile(r"#{1,6}+(?=[ \t]|$)")
_FENCE_OPEN = re.compile(r"`{3,}+|~{3,}+")
_BULLET = re.compile(r"[-+*](?=[ \t]|$)")
_ORDERED = re.compile(r"([0-9]{1,9}+)([.)])(?=[ \t]|$)")
_SETEXT = re.compile(r"(?:=++|-++)[ \t]*+$")

_BLOCK_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd"
    "|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset"
    "|h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav"
    "|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th"
    "|thead|title|tr|track|ul"
)
_ATTRIBUTE = (
    r"(?>\s++[a-zA-Z_:][a-zA-Z0-9:._-]*+"
    r"(?>\s*+=\s*+(?>[^\"'=<>`\x00-\x20]++|'[^']*+'|\"[^\"]*+\"))?)"
)
_HTML_STARTS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"<(?:script|pre|style|textarea)(?=[\s>]|$)", re.I | re.A), "raw"),
    (re.compile(r"<!--"), "-->"),
    (re.compile(r"<\?"), "?>"),
    (re.compile(r"<![A-Za-z]"), ">"),
    (re.compile(r"<!\[CDATA\["), "]]>"),
    (re.compile(rf"</?(?:{_BLOCK_NAMES})(?=[\s>]|/>|$)", re.I | re.A), None),
)
_HTML_TAG_LINE = re.compile(
    rf"(?:<[A-Za-z][A-Za-z0-9-]*+{_ATTRIBUTE}*+\s*+/?>|</[A-Za-z][A-Za-z0-9-]*+\s*+>)\s*+$"
)
_RAW_END = re.compile(r"</(?:script|pre|style|textarea)>", re.I | re.A)

HTML_BLANK_ENDS = "blank"
"""The end condition of HTML blocks that run to the next blank line (kinds 6 and 7)."""


def atx_level(line: str, at: int) -> int:
    """The level of the ATX heading starting at ``at`` (``## Title``), else 0."""
    m = _ATX.match(line, at)
    return m.end() - at if m else 0


def atx_text(line: str, start: int) -> str:
    """An ATX heading's text after its opening hashes, without a closing ``###`` run.

    String methods, not a pattern: ``\\s+#+\\s*$`` backtracks on long blank runs.
    """
    text = line[start:].strip(" \t")
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare.rstrip(" \t")
    return text


def fence_open(line: str, at: int) -> tuple[str, str] | None:
    """``(marker run, info string)`` when a fence opens at ``at``, else None.

    A backtick fence's info string may not hold a backtick (```` ```x``` ```` is an
    inline code span, not a fence).
    """
    m = _FENCE_OPEN.match(line, at)
    if m is None:
        return None
    marker = m.group()
    info = line[m.end() :]
    if marker[0] == "`" and "`" in info:
        return None
    return marker, info.strip(" \t")


def fence_closes(line: str, at: int, char: str, length: int) -> bool:
    """Whether the line closes a fence of ``length`` ``char`` s: a run as long, then blanks."""
    end = at
    n = len(line)
    while end < n and line[end] == char:
        end += 1
    return end - at >= length and not line[end:].strip(" \t")


def thematic_tail(line: str) -> int:
    """Where the line's longest tail of one mark (``-``, ``*``, ``_``) and blanks starts.

    Computed once a line, so that deciding at each nested list marker whether the
    rest of the line is a thematic break costs nothing: ``- - - x`` stays linear.
    """
    end = len(line.rstrip(" \t"))
    if not end or line[end - 1] not in "-*_":
        return len(line) + 1
    mark = line[end - 1]
    i = end
    while i > 0 and line[i - 1] in (mark, " ", "\t"):
        i -= 1
    return i


def is_thematic_break(line: str, at: int, tail: int) -> bool:
    """``***``, ``- - -``, ``___`` and the like (three or more of one mark, blanks between)."""
    return at >= tail and line.count(line[at], at) >= 3


def setext_level(line: str, at: int) -> int:
    """1 for an ``===`` underline, 2 for ``---``, else 0."""
    if _SETEXT.match(line, at) is None:
        return 0
    return 1 if line[at] == "=" else 2


def list_marker(line: str, at: int) -> tuple[str, int] | None:
    """``(marker, ordered start or -1)`` for a list marker at ``at``, else None."""
    m = _BULLET.match(line, at)
    if m is not None:
        return m.group(), -1
    m = _ORDERED.match(line, at)
    if m is not None:
        return m.group(), int(m.group(1))
    return None


def html_start(line: str, at: int, in_paragraph: bool) -> str | None:
    """The end condition of an HTML block starting at ``at``, or None if none starts.

    The answer is the text that ends the block (``-->`` for a comment), ``"raw"`` for
    ``<pre>``/``<script>``/``<style>``/``<textarea>``, or :data:`HTML_BLANK_ENDS`.
    A lone tag of any other name (kind 7) cannot interrupt a paragraph.
    """
    for pattern, end in _HTML_STARTS:
        if pattern.match(line, at):
            return end if end is not None else HTML_BLANK_ENDS
    if not in_paragraph and _HTML_TAG_LINE.match(line, at):
        return HTML_BLANK_ENDS
    return None


def html_ends(line: str, end: str, start: int = 0) -> bool:
    """Whether ``line`` (from ``start``) holds the end of an HTML block of kind ``end``."""
    if end == "raw":
        return _RAW_END.search(line, start) is not None
    return end != HTML_BLANK_ENDS and line.find(end, start) >= 0


def is_delimiter_row(line: str) -> bool:
    """A table's delimiter row: cells of ``---`` with optional ``:`` alignment marks."""
    row = line.strip()
    if "-" not in row or "|" not in row:
        return False
    row = row.removeprefix("|").removesuffix("|")
    for cell in row.split("|"):
        cell = cell.strip().removeprefix(":").removesuffix(":")
        if not cell or cell.strip("-"):
            return False
    return True
