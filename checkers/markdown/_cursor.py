"""A position in one line of Markdown, with CommonMark's tab stops.

Containers (block quotes, list items) consume a line's leading characters one level
at a time. The cursor keeps the character offset and the visual column, so a tab
can be consumed partly (a list item that wants two columns of a four-column tab
leaves the other two as spaces), as CommonMark requires.
"""

from __future__ import annotations

TAB_STOP = 4


class Cursor:
    """The unconsumed rest of one line: ``offset`` in characters, ``column`` visually.

    ``find_next_nonspace`` is cached for the whitespace run it scanned, so a deep
    stack of containers probing the same long run of blanks costs one scan, not one
    per container: the scanner stays linear on hostile indentation.
    """

    __slots__ = (
        "blank",
        "column",
        "indent",
        "line",
        "next_nonspace",
        "next_nonspace_column",
        "offset",
        "partial_tab",
        "tail",
    )

    def __init__(self, line: str) -> None:
        self.line = line
        self.offset = 0
        self.column = 0
        self.partial_tab = False
        self.next_nonspace = -1  # -1: not scanned yet
        self.next_nonspace_column = 0
        self.indent = 0
        self.blank = False
        self.tail = -1  # thematic-break tail of the line, computed when first asked

    def find_next_nonspace(self) -> None:
        """Set ``next_nonspace``, its column, ``indent`` and ``blank`` from ``offset``."""
        if self.next_nonspace < self.offset:  # the cached run is behind us: scan anew
            line = self.line
            i = self.offset
            cols = self.column  # a partly consumed tab is finished by the loop
            n = len(line)
            while i < n:
                c = line[i]
                if c == " ":
                    cols += 1
                elif c == "\t":
                    cols += TAB_STOP - cols % TAB_STOP
                else:
                    break
                i += 1
            self.next_nonspace = i
            self.next_nonspace_column = cols
        self.indent = self.next_nonspace_column - self.column
        self.blank = self.next_nonspace >= len(self.line)

    def peek(self, at: int) -> str:
        """The character at ``at``, or ``""`` past the end."""
        return self.line[at] if at < len(self.line) else ""

    def advance_next_nonspace(self) -> None:
        """Move to the first non-blank character (found by :meth:`find_next_nonspace`)."""
        self.offset = self.next_nonspace
        self.column = self.next_nonspace_column
        self.partial_tab = False

    def advance(self, count: int, columns: bool) -> None:
        """Consume ``count`` characters, or ``count`` columns when ``columns`` is set."""
        line = self.line
        n = len(line)
        if not self.partial_tab and line.find("\t", self.offset, self.offset + count) < 0:
            step = min(count, n - self.offset)  # no tab ahead: columns are characters
            self.offset += step
            self.column += step
            return
        while count > 0 and self.offset < n:
            if line[self.offset] == "\t":
                to_tab = TAB_STOP - self.column % TAB_STOP
                if columns:
                    self.partial_tab = to_tab > count
                    step = min(count, to_tab)
                    self.column += step
                    if not self.partial_tab:
                        self.offset += 1
                    count -= step
                else:
                    self.partial_tab = False
                    self.column += to_tab
                    self.offset += 1
                    count -= 1
            else:
                self.partial_tab = False
                self.offset += 1
                self.column += 1
                count -= 1

    def rest(self) -> str:
        """The unconsumed text, a partly consumed tab given back as its spaces."""
        if self.partial_tab:
            return " " * (TAB_STOP - self.column % TAB_STOP) + self.line[self.offset + 1 :]
        return self.line[self.offset :] if self.offset else self.line
