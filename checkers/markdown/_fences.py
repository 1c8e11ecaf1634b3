"""Find the fenced code blocks of a Markdown draft and what language each claims.

It follows CommonMark's fence rules (three or more backticks or tildes; a closing
fence of the same character at least as long as the opening one; a backtick fence's
info string holds no backtick; an unclosed fence runs to the end of the document)
and is lenient where generated Markdown is sloppy: fences indented by any amount
inside list items, a fence on a list item's own line (``1. ```python``), and fences
inside block quotes. The indentation of the opening fence (and the quote markers)
are removed from every line of the block, as a renderer would show it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"([ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?)(`{3,}|~{3,})(.*)")
_QUOTE = re.compile(r"[ ]{0,3}>[ ]?")
_LANGUAGE = re.compile(r"[{\s]*\.?([^\s{}.,;:=\"'`]*)")


@dataclass(frozen=True)
class Fence:
    """One fenced block: where it opens (1-based draft line), its language and its text.

    ``language`` is the first word of the info string, lower-cased (``""`` when the
    fence has none); ``closed`` is False when the draft ends inside the block.
    """

    line: int
    language: str
    source: str
    closed: bool


def unquote(line: str) -> tuple[int, str]:
    """The block-quote depth of ``line`` and the line without its ``>`` markers."""
    depth = 0
    while line.lstrip(" ").startswith(">"):
        m = _QUOTE.match(line)
        if m is None:
            break
        line = line[m.end() :]
        depth += 1
    return depth, line


def language_of(info: str) -> str:
    """``"python"`` for infos such as ``python title="x"``, ``{.python}``, ``Python``."""
    m = _LANGUAGE.match(info)
    return m.group(1).lower() if m else ""


def _dedent(line: str, width: int) -> str:
    """Remove up to ``width`` leading blanks, as CommonMark does inside a fence."""
    i = 0
    while i < width and i < len(line) and line[i] in " \t":
        i += 1
    return line[i:]


def _mark_lines(text: str) -> list[tuple[int, int, int]]:
    """``(line index, start, end)`` of every line holding three backticks or tildes."""
    found: list[int] = []
    for mark in ("```", "~~~"):  # str.find outruns a regular expression here
        at = text.find(mark)
        while at != -1:
            found.append(at)
            at = text.find(mark, at + 3)
    found.sort()
    marks: list[tuple[int, int, int]] = []
    line = counted = 0
    end = -1
    for at in found:
        if at < end:
            continue  # another mark on a line already listed
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end == -1:
            end = len(text)
        line += text.count("\n", counted, start)
        counted = start
        marks.append((line, start, end))
    return marks


def fences(text: str) -> list[Fence]:
    """Every fenced code block of ``text``, in order.

    Only lines holding three backticks or tildes can open or close a fence, so
    those are found first and the text between them is taken as a slice.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    marks = _mark_lines(text)
    lines: list[str] | None = None  # split only for fences in block quotes
    found: list[Fence] = []
    k = 0
    while k < len(marks):
        line, start, end = marks[k]
        k += 1
        raw = text[start:end]
        depth, opening = unquote(raw) if ">" in raw else (0, raw)
        m = _OPEN.fullmatch(opening)
        if m is None:
            continue
        prefix, fence, info = m.groups()
        if fence[0] == "`" and "`" in info:
            continue  # inline code such as ```x``` on one line, not a fence
        if depth:
            lines = lines if lines is not None else text.split("\n")
            last, closed, body = _quoted_body(lines, line + 1, depth, fence, len(prefix))
            source = "\n".join(body) + "\n" if body else ""
        else:
            last, closed, source = len(text), False, text[end + 1 :]
            while k < len(marks) and not closed:
                close_line, close_start, close_end = marks[k]
                k += 1
                stripped = text[close_start:close_end].strip()
                if stripped.startswith(fence) and not stripped.strip(fence[0]):
                    last, closed, source = close_line, True, text[end + 1 : close_start]
            if prefix:
                source = "\n".join(_dedent(b, len(prefix)) for b in source.split("\n"))
            if source and not source.endswith("\n"):
                source += "\n"
        while k < len(marks) and marks[k][0] <= last:
            k += 1
        found.append(Fence(line + 1, language_of(info), source, closed))
    return found


def _quoted_body(
    lines: list[str], i: int, depth: int, fence: str, width: int
) -> tuple[int, bool, list[str]]:
    """The end, closedness and lines of a fence opened inside a block quote."""
    body: list[str] = []
    while i < len(lines):
        inner_depth, inner = unquote(lines[i])
        if inner_depth < depth:  # the quote ended, and the block with it
            return i - 1, True, body
        stripped = inner.strip()
        if stripped.startswith(fence) and not stripped.strip(fence[0]):
            return i, True, body
        body.append(_dedent(inner, width))
        i += 1
    return len(lines), False, body
