"""The block scanner: one pass over the lines, CommonMark's container algorithm.

Each line first continues the open containers (block quotes, list items, footnote
definitions) from the outside in, then may open new ones and a leaf block (fence,
heading, HTML block, paragraph...). A line that continues fewer containers closes
the rest, unless it is the lazy continuation of an open paragraph. This is the
algorithm of the CommonMark reference implementation, reduced to what the checkers
need: no inline parsing, no tree, only the fenced blocks and the prose units.

Every line costs time proportional to its length: each container it continues
consumes at least one of its characters, except on a blank line, where a whole run
of list items is continued at once. So the scan is linear on any input, including
a megabyte of ``>`` or of nested list markers.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from . import _starts as st
from ._cursor import Cursor
from ._linkdefs import definitions_end
from ._model import Fence, Unit, UnitKind, language_of

QUOTE, ITEM, FOOTNOTE = 0, 1, 2
PARA, FENCE, CODE, HTML, MATH, TABLE = range(6)
FOOTNOTE_WIDTH = 4  # a footnote's continuation lines are indented four columns
_QUOTE_RUN = re.compile(">+")
_TAG_LINE = re.compile(r"[ \t]*+</?[A-Za-z][^<>]*+>[ \t]*+")

SPECIAL = frozenset(">#`~<=-_*+[$|:0123456789")


class _Leaf:
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


class Scanner:
    """Feed it every line once with :meth:`feed`, then :meth:`finish`."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        # the open containers, outermost first, as parallel lists: no object per
        # container, so a million nested quotes do not wake the garbage collector
        self.kinds: list[int] = []
        self.widths: list[int] = []  # columns a continuation line must be indented by
        self.markers: list[str] = []  # a list item's marker, kept in front of its first unit
        self.quotes: list[int] = []  # indices of the block quotes, ascending
        # every container but the innermost holds the next one: only its flag is kept
        self.top_has_child = False
        self.leaf: _Leaf | None = None
        self.fences: list[Fence] = []
        self.units: list[Unit] = []

    # -- containers -----------------------------------------------------------------

    def _match(self, cur: Cursor) -> int:
        """How many open containers ``cur``'s line continues, consuming their markers."""
        kinds = self.kinds
        n = len(kinds)
        i = 0
        line = cur.line
        while i < n:
            cur.find_next_nonspace()
            if cur.blank:
                # list items go on over a blank line (an empty one does not), quotes do
                # not: skip to the first quote in one step, not one item at a time
                q = bisect_left(self.quotes, i)
                first = i
                i = self.quotes[q] if q < len(self.quotes) else n
                if i == n and kinds[-1] != QUOTE and not self.top_has_child:
                    i = n - 1
                if i > first:
                    cur.advance_next_nonspace()  # the items took the blanks
                return i
            if kinds[i] == QUOTE:
                nn = cur.next_nonspace
                if cur.indent > 3 or line[nn] != ">":
                    return i
                # adjacent markers continue adjacent quotes in one step
                end = nn + 1
                if end < len(line) and line[end] == ">":
                    end = self._quote_run(line, nn, i)
                    i += end - nn - 1
                cur.advance_next_nonspace()
                cur.advance(end - nn, False)
                if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(line):
                    cur.advance(1, True)
            elif cur.indent >= self.widths[i]:
                cur.advance(self.widths[i], True)
            else:
                return i
            i += 1
        return i

    def _quote_run(self, line: str, nn: int, i: int) -> int:
        """The end of the run of ``>`` at ``nn`` that continues quotes ``i``, ``i + 1``...."""
        m = _QUOTE_RUN.match(line, nn)
        assert m is not None
        quotes = self.quotes
        q = bisect_left(quotes, i)
        # the quotes from i on are adjacent as long as their indices count up by one
        run = min(m.end() - nn, len(quotes) - q)
        lo, hi = 1, run  # binary search: the longest k with quotes[q + k - 1] == i + k - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if quotes[q + mid - 1] == i + mid - 1:
                lo = mid
            else:
                hi = mid - 1
        return nn + lo

    @staticmethod
    def _past_quote_marker(cur: Cursor) -> None:
        cur.advance_next_nonspace()
        cur.advance(1, False)
        if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(cur.line):
            cur.advance(1, True)

    def _push(self, kind: int, width: int = 0, marker: str = "", count: int = 1) -> None:
        """Open ``count`` nested containers of one kind (the innermost has no child yet)."""
        self.close_leaf()
        base = len(self.kinds)
        if kind == QUOTE:
            self.quotes.extend(range(base, base + count))
        self.kinds.extend([kind] * count)
        self.widths.extend([width] * count)
        self.markers.extend([marker] * count)
        self.top_has_child = False

    def _quotes(self, cur: Cursor) -> None:
        """Open a block quote for the ``>`` at the cursor and for each ``>`` right after it.

        A run of markers is opened in one step (a megabyte of ``>`` is a megabyte of
        nested quotes, and one step each would be slow, if linear).
        """
        line, nn = cur.line, cur.next_nonspace
        m = _QUOTE_RUN.match(line, nn)
        assert m is not None
        end = m.end()
        self._push(QUOTE, count=end - nn)
        cur.advance_next_nonspace()
        cur.advance(end - nn, False)
        if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(line):
            cur.advance(1, True)

    def _close_unmatched(self, matched: int) -> None:
        if len(self.kinds) > matched:
            self.close_leaf()
            del self.kinds[matched:], self.widths[matched:], self.markers[matched:]
            del self.quotes[bisect_left(self.quotes, matched) :]
            self.top_has_child = True  # it held what was just closed

    # -- leaves -----------------------------------------------------------------------

    def _open(self, kind: int, line: int) -> _Leaf:
        self.close_leaf()
        self.top_has_child = True
        leaf = self.leaf = _Leaf(kind, line)
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

    def _add_html(self, leaf: _Leaf) -> None:
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

    def _add_fence(self, leaf: _Leaf, closed: bool, end: int) -> None:
        info = leaf.info
        if "\\" in info or "&" in info:
            from ._inline import unescape

            info = unescape(info)
        source = "\n".join(leaf.lines) + "\n" if leaf.lines else ""
        self.fences.append(Fence(leaf.line + 1, end + 1, language_of(info), info, source, closed))

    def _add_paragraph(self, leaf: _Leaf) -> None:
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

    def _paragraph(self, i: int, text: str) -> None:
        """Open a paragraph; a list item's or footnote's first one is a unit of that kind."""
        unit: tuple[UnitKind, str] = ("paragraph", "")
        if self.kinds and not self.top_has_child:
            if self.kinds[-1] == ITEM:
                unit = ("item", self.markers[-1] + " ")
            elif self.kinds[-1] == FOOTNOTE:
                unit = ("footnote", "")
        leaf = self._open(PARA, i)
        leaf.unit = unit
        leaf.lines.append(text)

    def _continue_leaf(self, i: int, cur: Cursor, leaf: _Leaf) -> bool:
        """Give the line to the open fence, code or HTML block; False if the block ends."""
        cur.find_next_nonspace()
        if leaf.kind == FENCE:
            nn = cur.next_nonspace
            if (
                cur.indent <= leaf.close_indent
                and cur.peek(nn) == leaf.char
                and st.fence_closes(cur.line, nn, leaf.char, leaf.length)
            ):
                self.leaf = None
                self._add_fence(leaf, closed=True, end=i)
                return True
            k = leaf.offset
            while k > 0 and cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(cur.line):
                cur.advance(1, True)
                k -= 1
            leaf.lines.append(cur.rest())
            return True
        if leaf.kind == CODE:
            if cur.indent >= 4 or cur.blank:
                return True
            self.leaf = None
            return False
        if leaf.kind == HTML:
            if cur.blank and leaf.end == st.HTML_BLANK_ENDS:
                self.close_leaf()
                return True
            if leaf.end == st.HTML_BLANK_ENDS:
                leaf.lines.append(cur.rest())
            elif st.html_ends(cur.line, leaf.end, cur.offset):
                self.leaf = None
            return True
        if leaf.kind == MATH:
            if cur.line.rstrip().endswith("$$"):
                self.leaf = None
            return True
        return False  # a paragraph or a table: decided with the block starts

    # -- one line ---------------------------------------------------------------------

    def feed(self, i: int, line: str) -> None:
        """Read line ``i`` (0-based) of the document."""
        cur = Cursor(line)
        matched = self._match(cur) if self.kinds else 0
        leaf = self.leaf
        all_matched = matched == len(self.kinds)
        if (
            all_matched
            and leaf is not None
            and leaf.kind not in (PARA, TABLE)
            and self._continue_leaf(i, cur, leaf)
        ):
            return
        self._starts(i, cur, matched)

    def _starts(self, i: int, cur: Cursor, matched: int) -> None:
        """Open the containers and the leaf that the rest of the line starts."""
        all_matched = matched == len(self.kinds)
        leaf = self.leaf
        para = leaf is not None and leaf.kind == PARA
        opened = False
        line = cur.line
        while True:
            cur.find_next_nonspace()
            nn = cur.next_nonspace
            c = line[nn] if nn < len(line) else ""
            if c not in SPECIAL:
                if cur.indent >= 4 and not cur.blank and not (para and not opened):
                    self._close_unmatched(matched)
                    self._open(CODE, i)
                    return
                break
            # a list item, a lone tag or an underline interrupts a paragraph only when
            # the paragraph's own containers all went on; indented code never does
            in_para = para and all_matched and not opened
            if cur.indent >= 4:
                if c in "`~" and self._fence(i, cur, matched):
                    return  # an over-indented fence: a leniency, CommonMark has code here
                if not (para and not opened):
                    self._close_unmatched(matched)
                    self._open(CODE, i)
                    return
                break
            if c == ">":
                self._close_unmatched(matched)
                self._quotes(cur)
                matched = len(self.kinds)
                opened = True
                continue
            if self._leaf_start(i, cur, c, matched, in_para):
                return
            if (c in "-+*" or c.isdigit()) and self._item(cur, matched, in_para):
                matched = len(self.kinds)
                opened = True
                continue
            if c == "[" and self._footnote(cur, matched):
                matched = len(self.kinds)
                opened = True
                continue
            break
        self._text(i, cur, matched, para and not opened and not all_matched)

    def _leaf_start(self, i: int, cur: Cursor, c: str, matched: int, in_para: bool) -> bool:
        """Open a one-line or fenced leaf block at the cursor; False if none starts."""
        line, nn = cur.line, cur.next_nonspace
        if c == "#":
            level = st.atx_level(line, nn)
            if level:
                self._close_unmatched(matched)
                self.close_leaf()
                self._mark_child()
                self.units.append(Unit("heading", i + 1, st.atx_text(line, nn + level), level))
                return True
        elif c in "`~":
            return self._fence(i, cur, matched)
        elif c == "<":
            end = st.html_start(line, nn, in_para)
            if end is not None:
                self._close_unmatched(matched)
                leaf = self._open(HTML, i)
                leaf.end = end
                if end == st.HTML_BLANK_ENDS:
                    leaf.lines.append(line[nn:])
                if st.html_ends(line, end, nn + 2):
                    self.leaf = None
                return True
        elif c == "$" and line.startswith("$$", nn):
            self._close_unmatched(matched)
            self._open(MATH, i)
            if len(line.rstrip()) - nn > 3 and line.rstrip().endswith("$$"):
                self.leaf = None
            return True
        if c in "=-" and in_para:
            level = st.setext_level(line, nn)
            if level:
                self._setext(level)
                return True
        if c in "-*_":
            if cur.tail < 0:
                cur.tail = st.thematic_tail(line)
            if not st.is_thematic_break(line, nn, cur.tail):
                return False
            self._close_unmatched(matched)
            self.close_leaf()
            self._mark_child()
            return True
        return False

    def _mark_child(self) -> None:
        self.top_has_child = True

    def _fence(self, i: int, cur: Cursor, matched: int) -> bool:
        opening = st.fence_open(cur.line, cur.next_nonspace)
        if opening is None:
            return False
        marker, info = opening
        self._close_unmatched(matched)
        leaf = self._open(FENCE, i)
        leaf.char, leaf.length, leaf.info = marker[0], len(marker), info
        leaf.offset = cur.indent
        leaf.close_indent = 3 if cur.indent < 4 else cur.indent + 3  # over-indented: lenient
        return True

    def _setext(self, level: int) -> None:
        leaf = self.leaf
        assert leaf is not None
        self.leaf = None
        text = "\n".join(leaf.lines)
        line = leaf.line
        if text.startswith("["):
            cut = definitions_end(text)
            line += text.count("\n", 0, cut)
            text = text[cut:]
        if text.strip():
            self.units.append(Unit("heading", line + 1, text.strip(), level))

    def _item(self, cur: Cursor, matched: int, in_para: bool) -> bool:
        """Open a list item at the cursor, CommonMark's width rules; False if none starts."""
        line, nn = cur.line, cur.next_nonspace
        found = st.list_marker(line, nn)
        if found is None:
            return False
        marker, start = found
        if in_para and (start not in (-1, 1) or not line[nn + len(marker) :].strip()):
            return False  # only "1." and a non-empty item may interrupt a paragraph
        marker_offset = cur.indent
        cur.advance_next_nonspace()
        cur.advance(len(marker), True)
        start_col, start_off = cur.column, cur.offset
        while True:
            cur.advance(1, True)
            if cur.column - start_col >= 5 or cur.peek(cur.offset) not in (" ", "\t"):
                break
            if cur.offset >= len(line):
                break
        spaces = cur.column - start_col
        blank_item = cur.offset >= len(line)
        if spaces >= 5 or spaces < 1 or blank_item:
            padding = len(marker) + 1
            cur.column, cur.offset, cur.partial_tab = start_col, start_off, False
            if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(line):
                cur.advance(1, True)
        else:
            padding = len(marker) + spaces
        self._close_unmatched(matched)
        self._push(ITEM, marker_offset + padding, marker)
        return True

    def _footnote(self, cur: Cursor, matched: int) -> bool:
        """Open a footnote definition (``[^1]: text``) at the cursor; False if none starts."""
        line, nn = cur.line, cur.next_nonspace
        if not line.startswith("[^", nn):
            return False
        close = line.find("]:", nn + 2, nn + 1002)
        label = line[nn + 2 : close] if close > nn + 2 else ""
        if not label or any(ch in label for ch in " \t[]"):
            return False
        self._close_unmatched(matched)
        self._push(FOOTNOTE, FOOTNOTE_WIDTH)
        cur.advance(close + 2 - cur.offset, False)
        if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(line):
            cur.advance(1, True)
        return True

    def _text(self, i: int, cur: Cursor, matched: int, lazy: bool) -> None:
        """The rest of the line is text (or blank): continue or open a paragraph."""
        leaf = self.leaf
        if lazy and not cur.blank:
            assert leaf is not None
            leaf.lines.append(cur.line[cur.next_nonspace :])
            return
        self._close_unmatched(matched)
        leaf = self.leaf
        if cur.blank:
            if leaf is not None and leaf.kind in (PARA, TABLE):
                self.close_leaf()
            return
        rest = cur.line[cur.next_nonspace :]
        if "|" in rest and self._table_row(i, rest):
            return
        if leaf is not None and leaf.kind == PARA:
            leaf.lines.append(rest)
        else:
            self._paragraph(i, rest)

    def _table_row(self, i: int, rest: str) -> bool:
        """Read ``rest`` as a table row when it is one, and say whether it was.

        A table starts at a delimiter row (``---|---``) under a paragraph line holding
        a pipe, which becomes the header, or (leniently) at any line opening with ``|``.
        """
        leaf = self.leaf
        if leaf is None or leaf.kind != TABLE:
            if rest.startswith("|"):
                leaf = self._open(TABLE, i)
            elif leaf is not None and leaf.kind == PARA and st.is_delimiter_row(rest):
                header = leaf.lines[-1]
                if "|" not in header:
                    return False
                del leaf.lines[-1]
                if not leaf.lines:
                    self.leaf = None
                self._open(TABLE, i)
                self._cells(i - 1, header)
                return True
            else:
                return False
        if not st.is_delimiter_row(rest):
            self._cells(i, rest)
        return True

    def _cells(self, i: int, row: str) -> None:
        body = row.strip().removeprefix("|").removesuffix("|")
        for cell in _split_cells(body):
            if cell.strip():
                self.units.append(Unit("cell", i + 1, cell.strip()))

    def finish(self) -> None:
        """Close everything still open at the end of the document."""
        self._close_unmatched(0)
        self.close_leaf()


def _split_cells(row: str) -> list[str]:
    """A row's cells, split at pipes that are not escaped."""
    if "\\|" not in row:
        return row.split("|")
    cells: list[str] = []
    start = 0
    pos = row.find("|")
    while pos >= 0:
        if pos == 0 or row[pos - 1] != "\\":
            cells.append(row[start:pos])
            start = pos + 1
        pos = row.find("|", pos + 1)
    cells.append(row[start:])
    return cells
