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

# Text without which the await/yield, comprehension, dynamic-import and builtin
# rules cannot fire (the builtin names come from the name table).
_TRIGGER_WORDS = (
    "await",
    "yield",
    "async for",
    ":=",
    "import_module",
    "__import__",
    *name_table().builtins,
)
# Every name written after a dot: the only way to reach a module attribute or a
# method.
_AFTER_DOT = re.compile(r"\.[\s\\]*([A-Za-z_][A-Za-z0-9_]*)")


def needs_expressions(source: str, target: int) -> bool:
    """Whether the text alone shows that an expression rule could fire on ``source``.

    Syntax and operator rules need some text to be present (``await``, ``|``
    before 3.10, a ``*`` after ``[`` or ``,`` before 3.11...). The rules about
    members and keyword arguments need the block's imports as well: once a
    statements-only walk has found them, :func:`needs_resolving` decides.
    """
    if target < 9 or (RUNNING_MINOR >= 12 and target < 12 and may_need_pep701(source)):
        return True
    if any(word in source for word in _TRIGGER_WORDS):
        return True
    if target < 10 and "|" in source:
        return True
    if target < 11 and _star_item(source):
        return True
    return target < 13 and "array" in source and ("'w'" in source or '"w"' in source)


def needs_resolving(source: str, bindings: dict[str, str]) -> bool:
    """Whether a member or keyword rule could fire, given what the block imports.

    A tracked attribute (``.timeout``) or a call of a function whose keywords
    changed can only be resolved through the block's own imports: its module must
    be imported (``asyncio``), or its class named (``Executor``, imported or after
    a dot), unless a builtin's value is enough (``"x".removeprefix``). A call is
    then only flagged for a keyword the tables track, which must be in the text.
    """
    table = name_table()
    dotted = set(_AFTER_DOT.findall(source))
    named = dotted.union(bindings)
    for qualified in bindings.values():
        named.update(qualified.split("."))
    anywhere = table.anywhere
    for name in table.attrs.intersection(dotted):
        if name in anywhere or not named.isdisjoint(table.homes[name]):
            return True
    called = dotted.union(bindings)
    called.update(name for name in table.builtin_calls if name in source)
    for name in table.calls.intersection(called):
        if (name in anywhere or not named.isdisjoint(table.callers[name])) and any(
            keyword in source for keyword in table.keywords[name]
        ):
            return True
    return False


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
