"""JSON that leaves gradeloop: standard JSON always, never ``NaN`` or ``Infinity``.

Python's ``json`` writes a float that is not finite as ``NaN``/``Infinity``, which no
other JSON reader accepts. Whatever gradeloop prints or answers as JSON goes through
:func:`dumps`, which writes such a number as ``null`` (the value is unknown), and
escapes the control characters ``json`` leaves raw.
"""

from __future__ import annotations

import json
import math
from functools import partial
from typing import Any

__all__ = ["dumps", "finite"]


# JSON escapes C0 controls itself; DEL and the C1 controls it leaves raw (with
# ensure_ascii=False), and a terminal may act on them: written as \u escapes, the same
# string to any JSON reader.
_C1 = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}


# json.dumps builds an encoder per call when given allow_nan=False; the common call
# (no other options) reuses this one, as json.dumps reuses its own default encoder.
_STRICT = json.JSONEncoder(allow_nan=False)


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, **kwargs)`` with every non-finite float written as null, and
    DEL and C1 control characters as ``\\u`` escapes."""
    encode = partial(json.dumps, allow_nan=False, **kwargs) if kwargs else _STRICT.encode
    try:
        text = encode(value)
    except ValueError:  # rare: pay for the copy only when a non-finite float is there
        text = encode(finite(value))
    if text.isascii() and "\x7f" not in text:  # nothing to escape: the usual text
        return text
    return text.translate(_C1)


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
