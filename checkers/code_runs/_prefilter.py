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

# Text without which the await/yield, dynamic-import, builtin and keyword rules
# cannot fire (the builtin names and keywords come from the name table).
_TRIGGER_WORDS = (
    "await",
    "yield",
    "import_module",
    "__import__",
    *name_table().builtins,
    *{n[n.index("(") + 1 : -1] for _, n in name_table().spans if "(" in n},
)

# Every name written after a dot: the only way to reach a module attribute.
_AFTER_DOT = re.compile(r"\.[\s\\]*([A-Za-z_][A-Za-z0-9_]*)")


def needs_expressions(source: str, target: int) -> bool:
    """Whether any expression rule could fire, for target ``3.<target>``, on ``source``.

    Every expression rule needs some text to be present (``await``, ``|``, a
    ``*`` after ``[`` or ``,``, a tracked attribute after a dot and its module's
    name...). Most code has none of it, and then its statements are all a walk
    needs to visit. ``source`` may hold several blocks: False holds for each.
    """
    if target < 9 or (RUNNING_MINOR >= 12 and target < 12 and may_need_pep701(source)):
        return True
    if any(word in source for word in _TRIGGER_WORDS):
        return True
    if target < 10 and ("|" in source or ":=" in source):
        return True
    if target < 11 and _star_item(source):
        return True
    table = name_table()
    return any(  # 'socket.timeout' is no hint of asyncio.timeout unless asyncio appears
        top in source
        for attr in table.attrs.intersection(_AFTER_DOT.findall(source))
        for top in table.homes[attr]
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
