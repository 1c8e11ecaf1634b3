"""One Markdown block scanner for every checker: fenced code blocks and prose units.

:func:`scan` reads a draft once, following CommonMark 0.31.2's block structure
(block quotes, list items, lazy continuation lines, fences that end with their
container, indented code, HTML blocks and comments, link reference definitions),
plus what model output uses beyond it: YAML front matter, footnote definitions,
pipe tables and ``$$`` math. One leniency is kept on purpose: a fence indented four
columns or more, which CommonMark reads as indented code, is still a fence, so code
a model indented too far is checked rather than skipped.

``code_runs``, ``sentence_len``, the text checkers and the JSON checkers all read
the draft through this package; ``tests/checkers/test_markdown_spec.py`` holds it to
markdown-it-py on the 652 examples of the CommonMark spec.
"""

from __future__ import annotations

from functools import lru_cache

from ._driver import front_matter_end, run
from ._marks import plain_fences
from ._model import Document, Fence, Unit, UnitKind, language_of
from ._scanner import Scanner

__all__ = ["Document", "Fence", "Unit", "UnitKind", "fences", "language_of", "scan", "split_lines"]


def split_lines(text: str) -> list[str]:
    """The text's lines, with ``\\r\\n`` and a lone ``\\r`` read as line ends."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


@lru_cache(maxsize=8)
def scan(text: str) -> Document:
    """The fenced blocks and prose units of the Markdown ``text``, in document order.

    Cached for the last few texts: the checkers of one rubric read the same draft.
    """
    lines = split_lines(text)
    if lines[-1] == "":
        lines.pop()  # a final line end ends the last line; it does not start another
    scanner = Scanner(lines)
    run(scanner, "\n".join(lines), front_matter_end(lines))
    scanner.finish()
    return Document(tuple(scanner.fences), tuple(scanner.units))


def fences(text: str) -> tuple[Fence, ...]:
    """Every fenced code block of ``text``, in order (see :class:`Fence`).

    The same answer as ``scan(text).fences``; a draft whose fences all sit at the
    left margin, outside quotes, lists and HTML, is answered from its fence lines
    alone, which is several times faster.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "```" not in text and "~~~" not in text:
        return ()
    found = plain_fences(text)
    return found if found is not None else scan(text).fences
