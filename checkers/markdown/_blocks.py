"""A line scanner that finds the prose blocks of a Markdown document.

It follows CommonMark where the difference matters to a sentence count (fences,
indented code that cannot interrupt a paragraph, ordered lists that interrupt a
paragraph only from ``1``, list continuation indents) and is lenient where LLM output
is sloppy (fences indented inside list items, ``•`` bullets, tables without a leading
pipe). It is not a full Markdown parser and does not try to be one.
"""

from __future__ import annotations

import re

from ._fences import unquote as _unquote

_FENCE = re.compile(r"\s*(`{3,}|~{3,}|\$\$)(.*)")
_RAW_BLOCK = re.compile(r"\s*<(pre|script|style|textarea)\b", re.IGNORECASE)
_ATX = re.compile(r"\s*#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*")
_RULE = re.compile(r"\s*(?:(?:[-*_]\s*){3,}|=+\s*)")
_LIST = re.compile(r"(\s*)(?:[-*+•]|(\d{1,9})[.)])(?:\s+|$)")
_DELIMITER_ROW = re.compile(r"\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*")
_CELL = re.compile(r"(?<!\\)\|")
_LINK_DEFINITION = re.compile(r"\s{0,3}\[[^\]]+\]:\s*\S")
_TAG_LINE = re.compile(r"\s*</?[A-Za-z][^>]*>\s*")


def raw_units(text: str) -> list[str]:
    """The prose units of ``text``, each a single line of unprocessed inline Markdown."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    scanner = _Scanner()
    for i, line in enumerate(lines):
        scanner.feed(line, lines[i + 1] if i + 1 < len(lines) else "")
    scanner.flush()
    return scanner.units


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class _Scanner:
    """Feeds on lines, collects units. State: open paragraph, code block, list, quote."""

    def __init__(self) -> None:
        self.units: list[str] = []
        self.para: list[str] = []
        self.closing: re.Pattern[str] | None = None  # the end of the code block we are in
        self.list_indent: int | None = None  # content column of the current list item
        self.prev_blank = True
        self.depth = 0
        self.in_table = False

    def flush(self) -> None:
        if self.para:
            self.units.append(" ".join(self.para))
            self.para = []

    def feed(self, raw: str, following: str) -> None:
        depth, line = _unquote(raw.expandtabs(4) if "\t" in raw else raw)
        if self.closing is not None:
            if self.closing.match(line):
                self.closing = None
            return
        if depth != self.depth:
            self.flush()
            self.depth, self.list_indent, self.in_table = depth, None, False
        if not line.strip():
            self.flush()
            self.prev_blank, self.in_table = True, False
            return
        was_blank, self.prev_blank = self.prev_blank, False
        if self._code(line) or self._structure(line, _unquote(following)[1]):
            return
        self._text(line, was_blank)

    def _code(self, line: str) -> bool:
        """Skip a code line, entering a code block when ``line`` opens one."""
        indent = _indent(line)
        if not self.para:
            base = self.list_indent or 0
            if indent - (base if indent >= base else 0) >= 4:
                return True  # indented code: it cannot interrupt a paragraph
        fence = _FENCE.match(line)
        if fence is not None:
            marker, rest = fence.groups()
            if marker == "$$":
                if not rest.rstrip().endswith("$$"):
                    self.closing = re.compile(r".*\$\$\s*$")
            elif marker[0] == "`" and "`" in rest:
                return False  # an inline code span at the start of a line, not a fence
            else:
                self.closing = re.compile(rf"\s*{re.escape(marker[0])}{{{len(marker)},}}\s*$")
            self.flush()
            return True
        raw = _RAW_BLOCK.match(line)
        if raw is not None:
            end = re.compile(rf".*</{raw.group(1)}\s*>", re.IGNORECASE)
            if not end.match(line):
                self.closing = end
            self.flush()
            return True
        return False

    def _structure(self, line: str, following: str) -> bool:
        """Handle a heading, rule, table row, link definition or tag-only line."""
        heading = _ATX.fullmatch(line)
        if heading is not None:
            self.flush()
            self.units.append(heading.group(1) or "")
            self.list_indent = None
            return True
        if _RULE.fullmatch(line):
            self.flush()  # a thematic break, or the underline of a setext heading
            return True
        stripped = line.strip()
        if "|" in stripped and (
            self.in_table
            or stripped.startswith("|")
            or ("|" in following and _DELIMITER_ROW.fullmatch(following))
        ):
            self.flush()
            self.in_table = True
            # a delimiter row's cells hold no word, so they never become sentences
            cells = _CELL.split(stripped.removeprefix("|").removesuffix("|"))
            self.units.extend(c.strip() for c in cells if c.strip())
            return True
        self.in_table = False
        if _LINK_DEFINITION.match(line) or _TAG_LINE.fullmatch(line):
            self.flush()
            return True
        return False

    def _text(self, line: str, was_blank: bool) -> None:
        """A list item starts a unit of its own; other text joins the open paragraph."""
        item = _LIST.match(line)
        if item is not None and (
            not self.para or self.list_indent is not None or item.group(2) in (None, "1")
        ):
            self.flush()
            self.list_indent = item.end() if item.end() < len(line) else _indent(line) + 2
            self.para = [line.strip()]
            return
        if was_blank and self.list_indent is not None and _indent(line) < self.list_indent:
            self.list_indent = None  # a flush-left paragraph after a blank line ends the list
        self.para.append(line.strip())
