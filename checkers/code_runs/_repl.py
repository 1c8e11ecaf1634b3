"""Interactive-session transcripts in a Python block: check what was typed, not the output.

Documentation often shows a session::

    >>> total = sum([1, 2])
    >>> total
    3

The ``>>>`` and ``...`` lines are code; the rest is what Python printed. The
standard library's :mod:`doctest` parser knows the format: its examples are the
typed statements, without prompts. Each is put back on its own line of the
block, so that a problem is reported on the draft line where it was typed, and
the output lines become blank.
"""

from __future__ import annotations

import functools
from typing import Any


def is_transcript(source: str) -> bool:
    """Whether a block reads as a session: its first non-blank line starts with ``>>>``."""
    return source.lstrip().startswith(">>>")


@functools.cache
def _parser() -> Any:
    import doctest  # only blocks that are transcripts pay for the import

    return doctest.DocTestParser()


def typed_code(source: str) -> str:
    """The typed statements of a transcript, each on its own line; output lines blank.

    Raises ValueError (with doctest's reason) when a prompt is malformed, such as
    ``>>>x`` with no blank after the prompt.
    """
    lines = [""] * (source.count("\n") + 1)
    for example in _parser().get_examples(source, "the block"):
        typed = example.source.rstrip("\n").split("\n")
        for offset, line in enumerate(typed):
            if example.lineno + offset < len(lines):
                lines[example.lineno + offset] = line
    return "\n".join(lines)
