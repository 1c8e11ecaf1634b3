"""Whether a code block's text rules out every expression rule of the scan.

Most blocks hold nothing an expression rule of :mod:`._scan` could report:
no ``await``, no ``|`` below 3.10, no tracked attribute of a module they use...
Reading the text for those few signs costs far less than visiting every
expression node, so such blocks get a statements-only walk. The tests run both
walks on the same code and require the same findings.
"""

from __future__ import annotations

import re

from ._source import may_need_pep701
from ._stdlib import RUNNING_MINOR, name_table

# Words without which the await/yield, dynamic-import and builtin rules cannot
# fire (the builtin names come from the name table); "async for" and ":=" (the
# comprehension rules) are looked for as text.
_TRIGGER_NAMES = frozenset(
    {"await", "yield", "import_module", "__import__", *name_table().builtins}
)
# Every name written after a dot: the only way to reach a module attribute or a
# method.
_AFTER_DOT = re.compile(r"\.[\s\\]*([A-Za-z_][A-Za-z0-9_]*)")
# Every ASCII character that cannot be part of a name becomes a blank, so that a
# split yields the block's words: one pass in C instead of a search per word.
_WORDS = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})


def needs_expressions(source: str, target: int) -> bool:
    """Whether any expression rule could fire, for target ``3.<target>``, on ``source``.

    Every expression rule needs some text to be present (``await``, ``|``, a
    ``*`` after ``[`` or ``,``, a tracked attribute after a dot and the name of
    its module or class, a call of a function whose keywords changed with one of
    those keywords...). Most code has none of it, and then its statements are all
    a walk needs to visit. ``source`` may hold several blocks: False holds for each.
    """
    if target < 9 or (RUNNING_MINOR >= 12 and target < 12 and may_need_pep701(source)):
        return True
    if "async for" in source or ":=" in source:
        return True
    if target < 10 and "|" in source:
        return True
    if target < 11 and _star_item(source):
        return True
    if target < 13 and "array" in source and ("'w'" in source or '"w"' in source):
        return True
    words = set(source.translate(_WORDS).split())
    if not words.isdisjoint(_TRIGGER_NAMES):
        return True
    table = name_table()
    # 'socket.timeout' is no hint of asyncio.timeout unless asyncio appears.
    anywhere, homes, callers, keywords = table.anywhere, table.homes, table.callers, table.keywords
    dotted = table.attrs.intersection(_AFTER_DOT.findall(source))
    if any(name in anywhere or not words.isdisjoint(homes[name]) for name in dotted):
        return True
    # A call is only flagged for a keyword it passes that the tables track, and
    # only when its module's or class's name (or a builtin's value) is there.
    return any(
        not words.isdisjoint(keywords[name])
        and (name in anywhere or not words.isdisjoint(callers[name]))
        for name in table.calls.intersection(words)
    )


def _star_item(source: str) -> bool:
    """A single ``*`` right after ``[`` or ``,``: the only way to write ``a[*b]``."""
    i = source.find("*")
    while i != -1:
        if source[i + 1 : i + 2] != "*" and source[i - 1 : i] != "*":
            j = i - 1
            while j >= 0 and source[j] in " \t\n\\":
                j -= 1
            if j >= 0 and source[j] in "[,":
                return True
        i = source.find("*", i + 1)
    return False
