"""Whether a code block's text rules out every expression rule of the scan.

Most blocks hold nothing an expression rule of :mod:`._scan` could report:
no ``await``, no ``|`` below 3.10, no tracked attribute of a module they use...
Reading the text for those few signs costs far less than visiting every
expression node, so such blocks get a statements-only walk. The tests run both
walks on the same code and require the same findings.
"""

from __future__ import annotations

import functools
import re

from ._source import may_need_pep701
from ._stdlib import RUNNING_MINOR, missing_names

# Every name written after a dot: the only way to reach a module attribute or a
# method.
_AFTER_DOT = re.compile(r"\.[\s\\]*([A-Za-z_][A-Za-z0-9_]*)")


@functools.cache
def _trigger_words(target: int) -> tuple[str, ...]:
    """Text without which the await/yield, comprehension, dynamic-import and builtin
    rules cannot fire on ``3.<target>`` (only the builtins that version lacks)."""
    words: tuple[str, ...] = ("await", "yield", "async for", ":=", "import_module", "__import__")
    words += tuple(sorted(missing_names(target).builtins))
    # A word holding another one is found whenever it is ('BaseExceptionGroup'):
    # searching the text for it too would only cost time.
    return tuple(w for w in words if not any(o != w and o in w for o in words))


def needs_expressions(source: str, target: int) -> bool:
    """Whether the text alone shows that an expression rule could fire on ``source``.

    Syntax and operator rules need some text to be present (``await``, ``|``
    before 3.10, a ``*`` after ``[`` or ``,`` before 3.11...). The rules about
    members and keyword arguments need the block's imports as well: once a
    statements-only walk has found them, :func:`needs_resolving` decides.
    """
    if target < 9 or (RUNNING_MINOR >= 12 and target < 12 and may_need_pep701(source)):
        return True
    for word in _trigger_words(target):  # a loop: any() over a generator costs more here
        if word in source:
            return True
    if target < 10 and "|" in source:
        return True
    if target < 11 and "*" in source and _star_item(source):
        return True
    return target < 13 and "array" in source and ("'w'" in source or '"w"' in source)


def needs_resolving(source: str, bindings: dict[str, str], target: int) -> bool:
    """Whether a member or keyword rule could fire on ``3.<target>``, given the imports.

    Only entries the target lacks can be reported (:func:`missing_names`). A
    tracked attribute (``.timeout``) or a call of a function whose keywords
    changed can only be resolved through the block's own imports: its module must
    be imported (``asyncio``), or its class named (``Executor``, imported or after
    a dot), unless a builtin's value is enough (``"x".removeprefix``). A call is
    then only flagged for a keyword the tables track, which must be in the text.
    """
    table = missing_names(target)
    dotted = set(_AFTER_DOT.findall(source))
    attrs = table.attrs.intersection(dotted)
    called = set(table.calls.intersection(dotted))
    called.update(table.calls.intersection(bindings))
    for name in table.builtin_calls:
        if name in source:
            called.add(name)
    if not attrs and not called:
        return False
    named = dotted.union(bindings)
    for qualified in bindings.values():
        named.update(qualified.split("."))
    anywhere = table.anywhere
    for name in attrs:
        if name in anywhere or not named.isdisjoint(table.homes[name]):
            return True
    for name in called:
        if name in anywhere or not named.isdisjoint(table.callers[name]):
            for keyword in table.keywords[name]:
                if keyword in source:
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
