"""Interactive-session transcripts in a Python block: check what was typed, not the output.

Documentation often shows a session::

    >>> total = sum([1, 2])
    >>> total
    3

The ``>>>`` and ``...`` lines are code; the rest is what Python printed. The
format is :mod:`doctest`'s: a ``>>>`` prompt (then a blank, or the end of the
line) starts a statement, ``...`` lines right after it continue it, and any other
line is output, up to the next prompt. One leniency, for how documentation shows
a long call: while a statement leaves a bracket open, the lines after it continue
it without ``...`` prompts (``>>> f(`` then ``    x,`` then ``)``). Each typed line
keeps its own line of the block, so that a problem is reported on the draft line
where it was typed; output lines become blank. One pass over the lines, no regular
expression (doctest's own parser, which builds an object per example, is several
times slower on long transcripts).
"""

from __future__ import annotations


def is_transcript(source: str) -> bool:
    """Whether a block reads as a session at first sight: its first non-blank line
    starts with ``>>>``. (A block that does not parse as a script and has a prompt
    further down is read as a session too: :func:`has_prompt`.)"""
    # lstrip() returns the block itself when it starts with no blank (no copy), and a
    # prompt is the first thing to look at: cheaper than searching the block for '>>>'.
    return source.lstrip().startswith(">>>")


def has_prompt(source: str) -> bool:
    """Whether some line of the block starts with a ``>>>`` prompt (after blanks):
    asked only of a block that does not parse as a script."""
    return any(line.lstrip(" \t").startswith(">>>") for line in source.split("\n"))


def typed_code(source: str) -> str:
    """The typed statements of a transcript, each on its own line; output lines blank.

    Raises ValueError naming the line when a prompt has no blank after it
    (``>>>x = 1``), which doctest rejects too.
    """
    lines = source.split("\n")
    typed = [""] * len(lines)
    continuing = False
    depth = 0  # brackets the typed statement left open
    for number, line in enumerate(lines):
        text = line.lstrip(" \t")
        prompt = text[:3]
        if prompt == ">>>" or (continuing and prompt == "..."):
            rest = text[3:]
            if rest[:1] not in ("", " "):
                if prompt == "...":  # '...x' after a statement: output, as doctest reads it
                    continuing = False
                    continue
                raise ValueError(f"line {number + 1} lacks a blank after >>>: {line[:60]!r}")
            typed[number] = rest[1:]
            depth = (depth if prompt == "..." else 0) + _depth(rest)
            continuing = True
        elif continuing and depth > 0 and text:
            # a bracket left open, and the next lines written without '...' prompts
            # (a common way to show a long call): they finish the statement
            typed[number] = line
            depth += _depth(line)
        else:
            continuing = False
            depth = 0
    return "\n".join(typed)


def _depth(line: str) -> int:
    """Brackets ``line`` opens minus those it closes, outside its strings and comment."""
    depth = 0
    quote = ""
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth
