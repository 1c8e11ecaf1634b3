"""The prose of a Markdown document, as units that sentences never cross.

A unit is what :func:`gradeloop_checkers.markdown.scan` calls one: a paragraph, a
heading, a list item's first paragraph, a footnote or a table cell, with its lines
joined by single spaces. Code (fenced, indented), math, HTML blocks and comments,
front matter and link reference definitions are not prose.

Inside a unit, links keep their text and lose their address, images go, HTML tags
and comments go, character references are decoded (``&amp;`` is ``&``, not a word),
backslash escapes are undone, and each inline code span is replaced by a
placeholder word that :meth:`Prose.restore` turns back into the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..markdown import scan
from ..markdown._inline import HTML_CODE, code_spans, decode_entities
from ._segment import ELISION

PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_PRIVATE = re.compile("[\ue000-\ue002]")
_IMAGE = re.compile(r"!\[[^\[\]]*\](?:\([^()]*\)|\[[^\[\]]*\])")
_LINK = re.compile(
    r"\[([^\[\]]+)\](?:\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)|\[[^\[\]]*\])"
)
_FOOTNOTE = re.compile(r"\[\^[^\[\]\s]+\]")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+|[^<>\s@]+@[^<>\s@]+)>")
_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass
class Prose:
    """The prose units of one document and the inline code they had."""

    units: list[str] = field(default_factory=list)
    code_spans: list[str] = field(default_factory=list)

    def restore(self, text: str) -> str:
        """``text`` with inline-code placeholders turned back into ``code``."""
        if "\ue000" in text:
            text = PLACEHOLDER.sub(lambda m: f"`{self.code_spans[int(m.group(1))]}`", text)
        return text.replace(ELISION, "[…]")


def prose(text: str) -> Prose:
    """Split the Markdown ``text`` into prose units, code left out."""
    result = Prose()
    for unit in scan(text).units:
        flat = _inline(unit.text, result.code_spans)
        if flat:
            result.units.append(flat)
    return result


def _drop_comments(text: str) -> str:
    """``text`` without closed HTML comments; an unclosed ``<!--`` stays as text."""
    kept: list[str] = []
    pos = 0
    while (start := text.find("<!--", pos)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        kept.append(text[pos:start])
        kept.append(" ")
        pos = end + 3
    kept.append(text[pos:])
    return "".join(kept)


def _mask_code(text: str, spans: list[str]) -> str:
    """``text`` with each code span replaced by a placeholder naming its index in ``spans``."""
    found = code_spans(text)
    if not found:
        return text
    parts: list[str] = []
    pos = 0
    for start, end in found:
        ticks = 0
        while text[start + ticks] == "`":
            ticks += 1
        spans.append(" ".join(text[start + ticks : end - ticks].split()))
        parts.append(text[pos:start])
        parts.append(f"\ue000{len(spans) - 1}\ue001")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _inline(text: str, spans: list[str]) -> str:
    """Flatten one unit's inline Markdown into single-spaced plain words."""
    if "\ue000" in text or "\ue001" in text or "\ue002" in text:
        text = _PRIVATE.sub("", text)  # the placeholders must not be forged by the draft
    if "`" in text:
        text = _mask_code(text, spans)
    if "<" in text:
        if "<!--" in text:
            text = _drop_comments(text)
        text = HTML_CODE.sub(lambda m: _mask(m.group(2), spans), text)
        text = _AUTOLINK.sub(r"\1", text)
        text = _BREAK_TAG.sub(" ", text)
        text = _TAG.sub("", text)
    if "[" in text:
        text = _IMAGE.sub("", text)
        text = _LINK.sub(r"\1", text)
        text = _FOOTNOTE.sub("", text)
    if "&" in text:
        text = decode_entities(text)
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text.replace("\\\n", " "))
    return " ".join(text.split())


def _mask(code: str, spans: list[str]) -> str:
    spans.append(" ".join(code.split()))
    return f"\ue000{len(spans) - 1}\ue001"
