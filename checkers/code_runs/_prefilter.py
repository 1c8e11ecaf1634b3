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


# Letters from the rarest to the commonest in Python source (counted over CPython's
# Lib/*.py); the first 20 are missing from most 800-character blocks.
_RARE_LETTERS = "JQZXYKWGVHBqUzMjLDFC"


def _rare_letter(word: str) -> str:
    """The rarest letter of ``word`` among the rare ones, or ``""``."""
    for letter in _RARE_LETTERS:
        if letter in word:
            return letter
    return ""


def split_by_gate(words: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``words`` without a rare letter, and ``(letter, word)`` for those with one.

    One letter is found at ``memchr`` speed, a word is not: looking for a word's
    rare letter first costs little when the letter is there and saves the word's
    search when it is not, which for these letters is most of the time.
    """
    plain = tuple(w for w in words if not _rare_letter(w))
    gated = tuple((_rare_letter(w), w) for w in words if _rare_letter(w))
    return plain, gated


@functools.cache
def _trigger_words(target: int) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Text without which the await/yield, comprehension, dynamic-import and builtin
    rules cannot fire on ``3.<target>`` (only the builtins that version lacks), split
    by :func:`split_by_gate`."""
    words: tuple[str, ...] = ("await", "yield", "async for", ":=", "import_module", "__import__")
    words += tuple(sorted(missing_names(target).builtins))
    # A word holding another one is found whenever it is ('BaseExceptionGroup'):
    # searching the text for it too would only cost time.
    return split_by_gate(tuple(w for w in words if not any(o != w and o in w for o in words)))


@functools.cache
def _builtin_calls(target: int) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The builtins called with a keyword ``3.<target>`` lacks, split by :func:`split_by_gate`."""
    return split_by_gate(missing_names(target).builtin_calls)


def needs_expressions(source: str, target: int) -> bool:
    """Whether the text alone shows that an expression rule could fire on ``source``.

    Syntax and operator rules need some text to be present (``await``, ``|``
    before 3.10, a ``*`` after ``[`` or ``,`` before 3.11...). The rules about
    members and keyword arguments need the block's imports as well: once a
    statements-only walk has found them, :func:`needs_resolving` decides.
    """
    if target < 9 or (RUNNING_MINOR >= 12 and target < 12 and may_need_pep701(source)):
        return True
    plain, gated = _trigger_words(target)
    for word in plain:  # a loop: any() over a generator costs more here
        if word in source:
            return True
    for letter, word in gated:
        if letter in source and word in source:
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
    called = table.calls.intersection(dotted)
    if bindings:
        called |= table.calls.intersection(bindings)
    plain, gated = _builtin_calls(target)
    builtin = [name for name in plain if name in source]
    builtin += [name for letter, name in gated if letter in source and name in source]
    if builtin:
        called = called.union(builtin)
    if not attrs and not called:
        return False
    # Every word a use could resolve through: the dotted names, the bound names and
    # each part of what they are bound to (one join and one split, not a loop).
    named = dotted.union(bindings, ".".join(bindings.values()).split("."))
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
