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


def _unquote(line: str) -> tuple[int, str]:
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


def fences(text: str) -> list[Fence]:
    """Every fenced code block of ``text``, in order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found: list[Fence] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if "```" not in raw and "~~~" not in raw:
            continue
        depth, line = _unquote(raw) if ">" in raw else (0, raw)
        m = _OPEN.fullmatch(line)
        if m is None:
            continue
        prefix, fence, info = m.groups()
        if fence[0] == "`" and "`" in info:
            continue  # inline code such as ```x``` on one line, not a fence
        start, width = i, len(prefix)
        body: list[str] = []
        closed = False
        while i < len(lines):
            inner = lines[i]
            i += 1
            if depth:
                inner_depth, inner = _unquote(inner)
                if inner_depth < depth:  # the quote ended, and the block with it
                    i -= 1
                    closed = True
                    break
            stripped = inner.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                closed = True
                break
            body.append(_dedent(inner, width))
        source = "\n".join(body) + "\n" if body else ""
        found.append(Fence(start, language_of(info), source, closed))
    return found
