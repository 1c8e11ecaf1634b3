"""The block scanner's state: the open containers, the open leaf, and what was found.

:class:`State` keeps the stack of open containers (block quotes, list items,
footnote definitions) and the open leaf block, with the steps that open and close
them; closing a leaf turns it into what the checkers read, a :class:`Fence` or a
prose :class:`Unit`. :mod:`._opening` decides what a line opens and
:mod:`._scanner` what it continues; both work through these steps.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from ._linkdefs import definitions_end
from ._model import Fence, Unit, UnitKind, language_of

QUOTE, ITEM, FOOTNOTE = 0, 1, 2  # containers
PARA, FENCE, CODE, HTML, MATH, TABLE = range(6)  # leaves
_TAG_LINE = re.compile(r"[ \t]*+</?[A-Za-z][^<>]*+>[ \t]*+")


class Leaf:
    """The open leaf block, a child of the innermost open container."""

    __slots__ = (
        "char",
        "close_indent",
        "end",
        "info",
        "kind",
        "length",
        "line",
        "lines",
        "offset",
        "unit",
    )

    def __init__(self, kind: int, line: int) -> None:
        self.kind = kind
        self.line = line  # 0-based
        self.lines: list[str] = []
        self.char = ""
        self.length = 0
        self.offset = 0  # a fence's indentation, removed from its lines
        self.close_indent = 3
        self.end = ""
        self.info = ""
        self.unit: tuple[UnitKind, str] = ("paragraph", "")


class State:
    """The open containers and leaf of a scan, and the fences and units found so far."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        # the open containers, outermost first, in compact parallel arrays (no object
        # per container): a megabyte of nested markers costs a few megabytes, not tens
        self.kinds = bytearray()
        # the columns a continuation line must be indented by: at most 17 (a marker
        # indented 3, nine digits and a period, 4 spaces), so a byte each
        self.widths = bytearray()
        # the block quotes and the list items among them, as runs of adjacent indices:
        # quote run k holds the containers quote_starts[k] to quote_ends[k] - 1; item
        # run k likewise, all with the marker item_markers[k] (kept in front of an
        # item's first unit). Ascending; a megabyte of ">" is one run.
        self.quote_starts: list[int] = []
        self.quote_ends: list[int] = []
        self.item_starts: list[int] = []
        self.item_ends: list[int] = []
        self.item_markers: list[str] = []
        # every container but the innermost holds the next one: only its flag is kept
        self.top_has_child = False
        self.leaf: Leaf | None = None
        self.fences: list[Fence] = []
        self.units: list[Unit] = []

    # -- containers -------------------------------------------------------------------

    def push(self, kind: int, width: int = 0, marker: str = "", count: int = 1) -> None:
        """Open ``count`` nested containers of one kind (the innermost has no child yet)."""
        self.close_leaf()
        base = len(self.kinds)
        if kind == QUOTE:
            if self.quote_ends and self.quote_ends[-1] == base:
                self.quote_ends[-1] = base + count
            else:
                self.quote_starts.append(base)
                self.quote_ends.append(base + count)
        elif kind == ITEM:
            self._item_run(base, count, marker)
        self.kinds.extend(bytes((kind,)) * count)
        self.widths.extend(bytes((width,)) * count)
        self.top_has_child = False

    def push_items(self, markers: list[str], widths: list[int]) -> None:
        """Open nested list items, one per marker, at once (the innermost has no child yet)."""
        self.close_leaf()
        base = len(self.kinds)
        for k, marker in enumerate(markers):
            self._item_run(base + k, 1, marker)
        self.kinds.extend(bytes((ITEM,)) * len(markers))
        self.widths.extend(widths)
        self.top_has_child = False

    def _item_run(self, base: int, count: int, marker: str) -> None:
        """Record ``count`` items from container ``base`` on, extending the last run if it can."""
        if self.item_ends and self.item_ends[-1] == base and self.item_markers[-1] == marker:
            self.item_ends[-1] = base + count
        else:
            self.item_starts.append(base)
            self.item_ends.append(base + count)
            self.item_markers.append(marker)

    def close_unmatched(self, matched: int) -> None:
        """Close the open containers past the first ``matched`` (and the leaf they hold)."""
        if len(self.kinds) > matched:
            self.close_leaf()
            del self.kinds[matched:], self.widths[matched:]
            _cut_runs(self.quote_starts, self.quote_ends, matched)
            k = _cut_runs(self.item_starts, self.item_ends, matched)
            del self.item_markers[k:]
            self.top_has_child = True  # it held what was just closed

    # -- leaves -----------------------------------------------------------------------

    def open_leaf(self, kind: int, line: int) -> Leaf:
        """Close the open leaf and open one of ``kind`` at ``line`` (0-based)."""
        self.close_leaf()
        self.top_has_child = True
        leaf = self.leaf = Leaf(kind, line)
        return leaf

    def close_leaf(self) -> None:
        """Finish the open leaf block: a fence becomes a :class:`Fence`, a paragraph a unit."""
        leaf = self.leaf
        if leaf is None:
            return
        self.leaf = None
        if leaf.kind == FENCE:
            self._add_fence(leaf, closed=False, end=leaf.line + len(leaf.lines))
        elif leaf.kind == PARA:
            self._add_paragraph(leaf)
        elif leaf.kind == HTML and leaf.lines:
            self._add_html(leaf)

    def _add_html(self, leaf: Leaf) -> None:
        """The text of an HTML block a reader sees: a unit per run of lines between tag lines.

        Raw blocks (``<pre>``, ``<script>``...) and comments are never prose; the
        text inside ``<div>`` or ``<details>`` is shown, so it is.
        """
        start = leaf.line
        run: list[str] = []
        for k, line in enumerate([*leaf.lines, ""]):
            if line.strip() and not _TAG_LINE.fullmatch(line):
                if not run:
                    start = leaf.line + k
                run.append(line)
            elif run:
                self.units.append(Unit("html", start + 1, "\n".join(run)))
                run = []

    def _add_fence(self, leaf: Leaf, closed: bool, end: int) -> None:
        info = leaf.info
        if "\\" in info or "&" in info:
            from ._inline import unescape

            info = unescape(info)
        source = "\n".join(leaf.lines) + "\n" if leaf.lines else ""
        fence = Fence(leaf.line + 1, end + 1, language_of(info), info, source, closed)
        self.fences.append(fence)

    def _add_paragraph(self, leaf: Leaf) -> None:
        text = "\n".join(leaf.lines)
        line = leaf.line
        if text.startswith("["):
            cut = definitions_end(text)
            if cut:
                line += text.count("\n", 0, cut)
                text = text[cut:]
        if text.strip():
            kind, prefix = leaf.unit
            self.units.append(Unit(kind, line + 1, prefix + text))

    def paragraph(self, i: int, text: str) -> None:
        """Open a paragraph; a list item's or footnote's first one is a unit of that kind."""
        unit: tuple[UnitKind, str] = ("paragraph", "")
        if self.kinds and not self.top_has_child:
            if self.kinds[-1] == ITEM:
                unit = ("item", self.item_markers[-1] + " ")  # the innermost item's run
            elif self.kinds[-1] == FOOTNOTE:
                unit = ("footnote", "")
        leaf = self.open_leaf(PARA, i)
        leaf.unit = unit
        leaf.lines.append(text)


def _cut_runs(starts: list[int], ends: list[int], matched: int) -> int:
    """Keep only the indices below ``matched`` in the runs; the number of runs left."""
    k = bisect_left(starts, matched)
    del starts[k:], ends[k:]
    if k and ends[-1] > matched:
        ends[-1] = matched
    return k
