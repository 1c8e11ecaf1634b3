"""The prose of a Markdown document, as units that sentences never cross.

A unit is a paragraph, a heading, a list item, a table cell or a paragraph of a
block quote, with its lines joined by single spaces. What is not prose is left out:
fenced code (```` ``` ```` / ``~~~``, unclosed fences run to the end as in
CommonMark), indented code, ``$$`` math, ``<pre>``/``<script>``/``<style>`` blocks,
HTML comments, tag-only lines, link reference definitions and table delimiter rows.

Inside a unit, links keep their text and lose their address, images go, HTML tags go,
backslash escapes are undone, and each inline code span is replaced by a placeholder
word that :meth:`Prose.restore` turns back into the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..markdown._blocks import raw_units
from ._segment import ELISION

PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_PRIVATE = re.compile("[\ue000-\ue002]")
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_HTML_CODE = re.compile(r"<(code|kbd|samp)\b[^<>]*>([^<]*)</\1\s*>", re.IGNORECASE)
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
    text = _PRIVATE.sub("", text)  # the placeholders must not be forged by the draft
    if "<!--" in text:
        text = _drop_comments(text)
    result = Prose()
    for raw in raw_units(text):
        unit = _inline(raw, result.code_spans)
        if unit:
            result.units.append(unit)
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


def _inline(text: str, spans: list[str]) -> str:
    """Flatten one unit's inline Markdown into single-spaced plain words."""

    def mask(code: str) -> str:
        spans.append(" ".join(code.split()))
        return f"\ue000{len(spans) - 1}\ue001"

    if "`" in text:
        text = _CODE_SPAN.sub(lambda m: mask(m.group(2)), text)
    if "[" in text:
        text = _IMAGE.sub("", text)
        text = _LINK.sub(r"\1", text)
        text = _FOOTNOTE.sub("", text)
    if "<" in text:
        text = _HTML_CODE.sub(lambda m: mask(m.group(2)), text)
        text = _AUTOLINK.sub(r"\1", text)
        text = _BREAK_TAG.sub(" ", text)
        text = _TAG.sub("", text)
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    return " ".join(text.split())
