"""Comparing tool-call arguments: JSON equality, containment, and a hashable key.

Arguments are JSON data. Equality is JSON's, not Python's: ``true`` is not ``1``
(Python says ``True == 1``), while ``1`` and ``1.0`` are the same number. Containment
(``covers``) is recursive: an object covers another when every key of the smaller
one is in the bigger with a covered value; lists are compared element by element
(same length), scalars by equality. Every walk is iterative, so arguments nested as
deeply as JSON allows cannot exhaust the stack, and each is linear in the size of
the smaller value.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

__all__ = ["ArgsMode", "canon", "covers", "relates", "same"]

ArgsMode = Literal["ignore", "exact", "subset", "superset"]


class _Token(str):
    """Text already written, on the walk's stack beside values still to write."""


_CLOSE_OBJECT, _CLOSE_LIST, _COMMA = _Token("}"), _Token("]"), _Token(",")


def canon(value: Any) -> str:
    """A text that is the same for two values exactly when they are JSON-equal: keys
    sorted, integral floats written as integers, booleans apart from numbers."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Token):
            out.append(v)
        elif isinstance(v, dict):
            out.append("{")
            stack.append(_CLOSE_OBJECT)
            for key in sorted(v, key=str, reverse=True):
                stack += [_COMMA, v[key], _Token(json.dumps(str(key)) + ":")]
        elif isinstance(v, list | tuple):
            out.append("[")
            stack.append(_CLOSE_LIST)
            for item in reversed(v):
                stack += [_COMMA, item]
        else:
            out.append(_scalar(v))
    return "".join(out)


def _scalar(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return str(int(v)) if math.isfinite(v) and v.is_integer() else repr(v)
    return json.dumps(str(v), ensure_ascii=False)


def _scalar_same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def covers(small: Any, big: Any, *, exact: bool = False) -> bool:
    """Whether ``big`` holds everything ``small`` says (see the module's docstring);
    ``exact``: and nothing more (JSON equality)."""
    stack = [(small, big)]
    while stack:
        s, b = stack.pop()
        if isinstance(s, dict):
            if not isinstance(b, dict) or (exact and len(s) != len(b)):
                return False
            for key, value in s.items():
                if key not in b:
                    return False
                stack.append((value, b[key]))
        elif isinstance(s, list | tuple):
            if not isinstance(b, list | tuple) or len(s) != len(b):
                return False
            stack.extend(zip(s, b, strict=True))
        elif isinstance(b, dict | list | tuple) or not _scalar_same(s, b):
            return False
    return True


def same(a: Any, b: Any) -> bool:
    """JSON equality (``canon(a) == canon(b)``, without writing either out)."""
    return covers(a, b, exact=True)


def relates(mode: ArgsMode, made: dict[str, Any], expected: dict[str, Any] | None) -> bool:
    """Whether a call's arguments ``made`` match ``expected`` under ``mode`` (None:
    any arguments). ``subset``: every argument made is expected; ``superset``: every
    expected argument was made (more may have been)."""
    if expected is None or mode == "ignore":
        return True
    if mode == "exact":
        return same(made, expected)
    if mode == "subset":
        return covers(made, expected)
    return covers(expected, made)
