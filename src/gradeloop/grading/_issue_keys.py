"""Which criterion a judge's issue is about.

The judge is told to begin each issue with the key it is about (``tone: too harsh``);
models also quote the key (``"tone" is too harsh``, ```tone` is too harsh``) or start
a list item. Shadows, samples and juries all sort a judge's issues by key with this
one reading, so they never disagree about an issue.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["is_about", "issue_key"]

_OPENING = " -*`'\""  # list markers and quotes before the key
_AFTER_KEY = ("", ":", " ", "`", "'", '"', ")", ",")  # what may follow the key


def issue_key(issue: str, keys: Iterable[str]) -> str | None:
    """The key of ``keys`` that ``issue`` begins with, or None.

    When several match, the longest wins: ``"len_max: ..."`` is about ``len_max``,
    not ``len``; and a key may hold ``-``, so ``"len-max: ..."`` is not about ``len``.
    """
    head = issue.lstrip(_OPENING)
    found: str | None = None
    for key in keys:
        if (found is None or len(key) > len(found)) and _begins_with(head, key):
            found = key
    return found


def is_about(issue: str, key: str) -> bool:
    """Whether ``issue`` is about ``key`` (see :func:`issue_key`)."""
    return _begins_with(issue.lstrip(_OPENING), key)


def _begins_with(head: str, key: str) -> bool:
    return bool(key) and head.startswith(key) and head[len(key) : len(key) + 1] in _AFTER_KEY
