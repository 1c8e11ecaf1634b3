"""What the block scanner finds: fenced blocks and prose units."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_LANGUAGE = re.compile(r"[{\s]*+\.?([^\s{}.,;:=\"'`]*+)")

UnitKind = Literal["paragraph", "heading", "item", "footnote", "cell", "html"]


# The languages of the info strings met so far: drafts repeat a few short ones
# (``python``, ``json``), and a dictionary look-up costs a fraction of the match.
# Bounded in entries and in each key's length, so hostile drafts cannot grow it.
_LANGUAGES: dict[str, str] = {}
_CACHED_INFOS, _CACHED_INFO_LENGTH = 1024, 64


def language_of(info: str) -> str:
    """``"python"`` for infos such as ``python title="x"``, ``{.python}``, ``Python``."""
    language = _LANGUAGES.get(info)
    if language is None:
        m = _LANGUAGE.match(info)
        language = m.group(1).lower() if m else ""
        if len(info) <= _CACHED_INFO_LENGTH and len(_LANGUAGES) < _CACHED_INFOS:
            _LANGUAGES[info] = language
    return language


@dataclass(frozen=True, slots=True)
class Fence:
    """One fenced code block.

    ``line`` is the 1-based draft line of the opening fence; line ``k`` of
    ``source`` (1-based) is draft line ``line + k``. ``end`` is the line of the
    closing fence, or of the block's last line when it is not closed: an unclosed
    fence ends with its container (a list item, a block quote) or the document.
    ``language`` is the info string's first word, lower-cased (``""`` for none);
    ``source`` has the container markers and the fence's indentation removed, every
    line ending in ``\\n``.
    """

    line: int
    end: int
    language: str
    info: str
    source: str
    closed: bool


@dataclass(frozen=True, slots=True)
class Unit:
    """One prose unit: a paragraph, heading, list item's first paragraph, footnote, cell...

    ``html`` units are the text lines of an HTML block such as ``<div>`` (what a
    reader sees, tags still in); raw ``<pre>``/``<script>`` blocks and comments
    give none.

    ``text`` is the unit's raw inline Markdown with its lines joined by ``\\n`` (a
    list item's marker, such as ``1.``, kept in front); ``line`` is its first
    1-based draft line; ``level`` is a heading's level (1-6), else 0.
    """

    kind: UnitKind
    line: int
    text: str
    level: int = 0


@dataclass(frozen=True, slots=True)
class Document:
    """Everything one scan found, in document order."""

    fences: tuple[Fence, ...]
    units: tuple[Unit, ...]

    def code_lines(self, count: int) -> list[bool]:
        """For each of ``count`` lines, whether it belongs to a fence (fence lines included)."""
        mask = [False] * count
        for f in self.fences:
            for k in range(f.line - 1, min(f.end, count)):
                mask[k] = True
        return mask
