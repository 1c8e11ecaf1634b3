"""Block starts: the containers and the leaf that the rest of a line opens.

Once a line has continued the open containers (:meth:`._scanner.Scanner.feed`), what is left
of it may open block quotes, list items and footnote definitions, then one leaf: an
ATX heading, a fence, an HTML block, math, a thematic break, a setext underline,
indented code, a table row or paragraph text. :func:`open_blocks` tries them in
CommonMark's order of precedence; the recognisers of single lines are in
:mod:`._starts`, the containers and leaves themselves in :mod:`._scanner`.
"""

from __future__ import annotations

import re

from . import _starts as st
from ._cursor import Cursor
from ._linkdefs import definitions_end
from ._model import Unit
from ._state import CODE, FENCE, FOOTNOTE, HTML, ITEM, MATH, PARA, QUOTE, TABLE, State

FOOTNOTE_WIDTH = 4  # a footnote's continuation lines are indented four columns

BULK_ITEMS = True
"""Open runs of list items on one line in one step; tests turn it off to compare."""
_NEXT_ITEM = re.compile(r"([-+*]|[0-9]{1,9}+[.)]) (?=[^ \t])")

SPECIAL = frozenset(">#`~<=-_*+[$|:0123456789")
"""The characters a block start other than indented code can open with."""


def open_blocks(sc: State, i: int, cur: Cursor, matched: int) -> None:
    """Open the containers and the leaf that the rest of the line starts."""
    all_matched = matched == len(sc.kinds)
    leaf = sc.leaf
    para = leaf is not None and leaf.kind == PARA
    opened = False
    line = cur.line
    while True:
        cur.find_next_nonspace()
        nn = cur.next_nonspace
        c = line[nn] if nn < len(line) else ""
        if c not in SPECIAL:
            if cur.indent >= 4 and not cur.blank and not (para and not opened):
                sc.close_unmatched(matched)
                sc.open_leaf(CODE, i)
                return
            break
        # a list item, a lone tag or an underline interrupts a paragraph only when
        # the paragraph's own containers all went on; indented code never does
        in_para = para and all_matched and not opened
        if cur.indent >= 4:
            if c in "`~" and _fence(sc, i, cur, matched):
                return  # an over-indented fence: a leniency, CommonMark has code here
            if not (para and not opened):
                sc.close_unmatched(matched)
                sc.open_leaf(CODE, i)
                return
            break
        if c == ">":
            sc.close_unmatched(matched)
            _quotes(sc, cur)
            matched = len(sc.kinds)
            opened = True
            continue
        if _leaf_start(sc, i, cur, c, matched, in_para):
            return
        if (c in "-+*" or c.isdigit()) and _item(sc, cur, matched, in_para):
            if BULK_ITEMS:
                _item_run(sc, cur)
            matched = len(sc.kinds)
            opened = True
            continue
        if c == "[" and _footnote(sc, cur, matched):
            matched = len(sc.kinds)
            opened = True
            continue
        break
    _text(sc, i, cur, matched, para and not opened and not all_matched)


def _quotes(sc: State, cur: Cursor) -> None:
    """Open a block quote for the ``>`` at the cursor and for each ``>`` right after it.

    A run of markers is opened in one step (a megabyte of ``>`` is a megabyte of
    nested quotes, and one step each would be slow, if linear).
    """
    line, nn = cur.line, cur.next_nonspace
    m = st.QUOTE_RUN.match(line, nn)
    assert m is not None
    end = m.end()
    sc.push(QUOTE, count=end - nn)
    cur.advance_next_nonspace()
    cur.advance(end - nn, False)
    if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(line):
        cur.advance(1, True)


def _leaf_start(sc: State, i: int, cur: Cursor, c: str, matched: int, in_para: bool) -> bool:
    """Open a one-line or fenced leaf block at the cursor; False if none starts."""
    line, nn = cur.line, cur.next_nonspace
    if c == "#":
        level = st.atx_level(line, nn)
        if level:
            sc.close_unmatched(matched)
            sc.close_leaf()
            sc.top_has_child = True
            sc.units.append(Unit("heading", i + 1, st.atx_text(line, nn + level), level))
            return True
    elif c in "`~":
        return _fence(sc, i, cur, matched)
    elif c == "<":
        end = st.html_start(line, nn, in_para)
        if end is not None:
            sc.close_unmatched(matched)
            leaf = sc.open_leaf(HTML, i)
            leaf.end = end
            if end == st.HTML_BLANK_ENDS:
                leaf.lines.append(line[nn:])
            if st.html_ends(line, end, nn + 2):
                sc.leaf = None
            return True
    elif c == "$" and line.startswith("$$", nn):
        sc.close_unmatched(matched)
        sc.open_leaf(MATH, i)
        if len(line.rstrip()) - nn > 3 and line.rstrip().endswith("$$"):
            sc.leaf = None
        return True
    if c in "=-" and in_para:
        level = st.setext_level(line, nn)
        if level:
            _setext(sc, level)
            return True
    if c in "-*_":
        if cur.tail < 0:
            cur.tail = st.thematic_tail(line)
        if not st.is_thematic_break(line, nn, cur.tail):
            return False
        sc.close_unmatched(matched)
        sc.close_leaf()
        sc.top_has_child = True
        return True
    return False


def _fence(sc: State, i: int, cur: Cursor, matched: int) -> bool:
    opening = st.fence_open(cur.line, cur.next_nonspace)
    if opening is None:
        return False
    marker, info = opening
    sc.close_unmatched(matched)
    leaf = sc.open_leaf(FENCE, i)
    leaf.char, leaf.length, leaf.info = marker[0], len(marker), info
    leaf.offset = cur.indent
    leaf.close_indent = 3 if cur.indent < 4 else cur.indent + 3  # over-indented: lenient
    return True


def _setext(sc: State, level: int) -> None:
    leaf = sc.leaf
    assert leaf is not None
    sc.leaf = None
    text = "\n".join(leaf.lines)
    line = leaf.line
    if text.startswith("["):
        cut = definitions_end(text)
        line += text.count("\n", 0, cut)
        text = text[cut:]
    if text.strip():
        sc.units.append(Unit("heading", line + 1, text.strip(), level))


def _item(sc: State, cur: Cursor, matched: int, in_para: bool) -> bool:
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
    sc.close_unmatched(matched)
    sc.push(ITEM, marker_offset + padding, marker)
    return True


def _item_run(sc: State, cur: Cursor) -> None:
    """Open at once the list items that follow, on its line, the item just opened.

    ``- - - x`` nests an item in an item in an item. Each marker followed by one
    space and more text opens an item exactly as :func:`_item` would (its content
    starts one column after the marker, so its width is the marker's length plus
    one), unless a thematic break starts there (``- - -`` at the end of the line).
    Found with one pattern match each and pushed in one step, a line of a megabyte
    of markers costs a fraction of the way round the whole loop of block starts.
    The last marker of the run (whose width depends on what follows) is left to it.
    """
    cur.find_next_nonspace()
    if cur.indent or cur.partial_tab:
        return
    line, pos = cur.line, cur.next_nonspace
    markers: list[str] = []
    widths: list[int] = []
    while (m := _NEXT_ITEM.match(line, pos)) is not None:
        if line[pos] in "-*":
            if cur.tail < 0:
                cur.tail = st.thematic_tail(line)
            if pos >= cur.tail:
                break  # a thematic break may start here: the loop decides
        marker = m.group(1)
        markers.append(marker)
        widths.append(len(marker) + 1)
        pos = m.end()
    if markers:
        sc.push_items(markers, widths)
        cur.advance(pos - cur.offset, False)


def _footnote(sc: State, cur: Cursor, matched: int) -> bool:
    """Open a footnote definition (``[^1]: text``) at the cursor; False if none starts."""
    line, nn = cur.line, cur.next_nonspace
    if not line.startswith("[^", nn):
        return False
    close = line.find("]:", nn + 2, nn + 1002)
    label = line[nn + 2 : close] if close > nn + 2 else ""
    if not label or any(ch in label for ch in " \t[]"):
        return False
    sc.close_unmatched(matched)
    sc.push(FOOTNOTE, FOOTNOTE_WIDTH)
    cur.advance(close + 2 - cur.offset, False)
    if cur.peek(cur.offset) in (" ", "\t") and cur.offset < len(line):
        cur.advance(1, True)
    return True


def _text(sc: State, i: int, cur: Cursor, matched: int, lazy: bool) -> None:
    """The rest of the line is text (or blank): continue or open a paragraph."""
    leaf = sc.leaf
    if lazy and not cur.blank:
        assert leaf is not None
        leaf.lines.append(cur.line[cur.next_nonspace :])
        return
    sc.close_unmatched(matched)
    leaf = sc.leaf
    if cur.blank:
        if leaf is not None and leaf.kind in (PARA, TABLE):
            sc.close_leaf()
        return
    rest = cur.line[cur.next_nonspace :]
    if "|" in rest and _table_row(sc, i, rest):
        return
    if leaf is not None and leaf.kind == PARA:
        leaf.lines.append(rest)
    else:
        sc.paragraph(i, rest)


def _table_row(sc: State, i: int, rest: str) -> bool:
    """Read ``rest`` as a table row when it is one, and say whether it was.

    A table starts at a delimiter row (``---|---``) under a paragraph line holding
    a pipe, which becomes the header, or (leniently) at any line opening with ``|``.
    """
    leaf = sc.leaf
    if leaf is None or leaf.kind != TABLE:
        if rest.startswith("|"):
            leaf = sc.open_leaf(TABLE, i)
        elif leaf is not None and leaf.kind == PARA and st.is_delimiter_row(rest):
            header = leaf.lines[-1]
            if "|" not in header:
                return False
            del leaf.lines[-1]
            if not leaf.lines:
                sc.leaf = None
            sc.open_leaf(TABLE, i)
            _cells(sc, i - 1, header)
            return True
        else:
            return False
    if not st.is_delimiter_row(rest):
        _cells(sc, i, rest)
    return True


def _cells(sc: State, i: int, row: str) -> None:
    body = row.strip().removeprefix("|").removesuffix("|")
    for cell in _split_cells(body):
        if cell.strip():
            sc.units.append(Unit("cell", i + 1, cell.strip()))


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
