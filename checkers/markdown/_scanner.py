"""The block scanner: one pass over the lines, CommonMark's container algorithm.

Each line first continues the open containers (block quotes, list items, footnote
definitions) from the outside in, then may open new ones and a leaf block (fence,
heading, HTML block, paragraph...). A line that continues fewer containers closes
the rest, unless it is the lazy continuation of an open paragraph. This is the
algorithm of the CommonMark reference implementation, reduced to what the checkers
need: no inline parsing, no tree, only the fenced blocks and the prose units.
This module reads what a line continues (the open containers, an open fence, code
or HTML block); what the rest of the line opens is read by :mod:`._opening`, and
the containers and leaves themselves are kept by :class:`._state.State`.

Every line costs time proportional to its length: each container it continues
consumes at least one of its characters, except on a blank line, where a whole run
of list items is continued at once. So the scan is linear on any input, including
a megabyte of ``>`` or of nested list markers.
"""

from __future__ import annotations

from bisect import bisect_right

from . import _starts as st
from ._cursor import Cursor
from ._opening import open_blocks
from ._state import CODE, FENCE, HTML, MATH, PARA, QUOTE, TABLE, Leaf, State


class Scanner(State):
    """Feed it every line once with :meth:`feed`, then :meth:`finish`."""

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
                q = bisect_right(self.quote_ends, i)  # the first run that ends past i
                first = i
                i = max(i, self.quote_starts[q]) if q < len(self.quote_ends) else n
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
        m = st.QUOTE_RUN.match(line, nn)
        assert m is not None
        k = bisect_right(self.quote_starts, i) - 1  # the run of quotes that holds i
        return nn + min(m.end() - nn, self.quote_ends[k] - i)

    # -- leaves -----------------------------------------------------------------------

    def _continue_leaf(self, i: int, cur: Cursor, leaf: Leaf) -> bool:
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
        open_blocks(self, i, cur, matched)

    def finish(self) -> None:
        """Close everything still open at the end of the document."""
        self.close_unmatched(0)
        self.close_leaf()
