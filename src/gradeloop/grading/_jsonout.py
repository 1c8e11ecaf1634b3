"""JSON that leaves gradeloop: standard JSON always, never ``NaN`` or ``Infinity``.

Python's ``json`` writes a float that is not finite as ``NaN``/``Infinity``, which no
other JSON reader accepts. Whatever gradeloop prints or answers as JSON goes through
:func:`dumps`, which writes such a number as ``null`` (the value is unknown).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "finite"]


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, **kwargs)`` with every non-finite float written as null."""
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError:  # rare: pay for the copy only when a non-finite float is there
        return json.dumps(finite(value), allow_nan=False, **kwargs)


def finite(value: Any) -> Any:
    """A copy of ``value`` (dicts, lists, tuples) with non-finite floats made None.

    Walked with an explicit stack, so a deeply nested value cannot overflow it.
    """
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]  # (container, slot, value)
    while stack:
        container, slot, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            container[slot] = None
        elif isinstance(item, dict):
            copy = dict(item)
            container[slot] = copy
            stack.extend((copy, k, v) for k, v in copy.items())
        elif isinstance(item, list | tuple):
            items = list(item)
            container[slot] = items
            stack.extend((items, i, v) for i, v in enumerate(items))
    return root[0]
