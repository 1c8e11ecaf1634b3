"""Regular expressions that run in linear time, whoever wrote them.

A rubric's ``regex`` option, a pattern an MCP client sends, a pattern a model
proposes: Python's ``re`` backtracks, so ``(a+)+$`` takes exponential time on 30
characters and ``\\d+c`` quadratic time on a long draft (12 s on 50 KB of digits), and
a search holding the interpreter cannot be stopped by a timeout. So every such
pattern goes through :func:`linear_regex`, which picks an engine that runs it in time
linear in the text, or refuses it with the reason:

1. **Python's ``re``**, when the pattern cannot backtrack far: every repeat bounded,
   none nested in another or around an alternation, no backreference, and the steps
   it can try at one position (repeat bounds multiplied along a sequence, branches
   added) at most :data:`MAX_STEPS`. Such a pattern keeps Python's exact meaning.
2. **RE2** (Google's linear-time engine, the ``google-re2`` package: ``pip install
   'gradeloop[re2]'``) for the rest: unbounded repeats (``\\d+``, ``.*``) and nested
   ones. RE2 has no backreferences or lookarounds and takes repeat counts up to
   1000; its ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII (``\\pL`` and ``\\p{N}``
   name letters and digits of every script).
3. **Refused**: a pattern neither can run in linear time, with the reason (and,
   without ``google-re2``, the way to install it).

The decision is made when a rubric loads, so a pattern that would hang is an error
naming the criterion, never a hung grade.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = [
    "MAX_STEPS",
    "LinearRegex",
    "Match",
    "backtracking_risk",
    "linear_regex",
    "regex_problem",
]

#: The steps a pattern left to Python's ``re`` may try at one position of a text: at
#: most this many times the text's length in all (a few milliseconds on 50 KB).
MAX_STEPS = 256
_MAX_PATTERN = 1_000_000  # characters (a template may insert a long reference)
_CACHED_PATTERN = 10_000  # longer ones (a template with a reference in it) are not kept


class Match(Protocol):
    """A match, as the checkers read one (``re.Match`` and RE2's both have this)."""

    def group(self, index: int, /) -> Any: ...

    def start(self) -> int: ...


class LinearRegex(Protocol):
    """A compiled pattern that searches in linear time."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str, /) -> Match | None: ...

    def finditer(self, text: str, /) -> Iterator[Match]: ...


def linear_regex(
    pattern: str, *, ignore_case: bool = False, multiline: bool = False, dotall: bool = False
) -> LinearRegex:
    """``pattern`` compiled to search in time linear in the text (see the module);
    ``ValueError`` saying why when it cannot be, or does not compile."""
    if isinstance(pattern, str) and len(pattern) > _CACHED_PATTERN:  # a long rendered template
        return _compiled.__wrapped__(pattern, ignore_case, multiline, dotall)
    return _compiled(pattern, ignore_case, multiline, dotall)


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be searched in linear time (or does not compile), or None."""
    try:
        linear_regex(pattern)
    except ValueError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str, ignore_case: bool, multiline: bool, dotall: bool) -> LinearRegex:
    if not isinstance(pattern, str):
        raise ValueError(f"a pattern is a string, not {type(pattern).__name__}")
    if len(pattern) > _MAX_PATTERN:
        raise ValueError(
            f"the pattern is {len(pattern):,} characters long; at most {_MAX_PATTERN:,}"
        )
    flags = re.NOFLAG
    for on, flag in ((ignore_case, re.IGNORECASE), (multiline, re.MULTILINE), (dotall, re.DOTALL)):
        if on:
            flags |= flag
    try:
        python: re.Pattern[str] = re.compile(pattern, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"`{pattern}` is not a valid regular expression ({exc})") from None
    risk = backtracking_risk(pattern)
    if risk is None:
        return python
    return _on_re2(pattern, risk, ignore_case, multiline, dotall)


def _on_re2(
    pattern: str, risk: str, ignore_case: bool, multiline: bool, dotall: bool
) -> LinearRegex:
    try:
        re2 = importlib.import_module("re2")
    except ImportError:
        raise ValueError(
            f"`{pattern}` {risk}: Python's regex engine could take quadratic time or worse "
            "on a long draft; install the linear-time engine (pip install 'gradeloop[re2]') "
            "to run it, or bound every repeat (e.g. {1,50}) and do not nest them"
        ) from None
    options = re2.Options()
    options.log_errors = False  # the reason is raised, not logged to stderr
    inline = "".join(f for on, f in ((ignore_case, "i"), (multiline, "m"), (dotall, "s")) if on)
    try:
        compiled: LinearRegex = re2.compile(f"(?{inline}){pattern}" if inline else pattern, options)
    except Exception as exc:  # re2.error: the syntax RE2 cannot take
        first = exc.args[0] if exc.args else exc
        reason = first.decode("utf-8", "replace") if isinstance(first, bytes) else str(first)
        raise ValueError(
            f"`{pattern}` {risk}, and the linear-time engine (RE2) cannot take it ({reason}); "
            "write it without backreferences, lookarounds or repeat counts above 1000"
        ) from None
    return compiled


class _Risky(Exception):
    pass


def backtracking_risk(pattern: str) -> str | None:
    """Why Python's ``re`` could take more than linear time on ``pattern``, or None
    (every repeat bounded and not nested, no backreference, and at most
    :data:`MAX_STEPS` steps at one position)."""
    try:  # the parser of `re` itself: what it builds is what runs
        constants = importlib.import_module("re._constants")
        parser = importlib.import_module("re._parser")
        tree = parser.parse(pattern)
    except Exception:  # a Python without that parser, or a pattern it cannot read
        return "cannot be checked for its running time"
    try:
        steps = _cost(tree, constants, in_repeat=False)
    except _Risky as risk:
        return str(risk)
    if steps > MAX_STEPS:
        return f"can try {steps:,} steps at each position of a text (more than {MAX_STEPS})"
    return None


def _cost(items: Any, sre: Any, *, in_repeat: bool) -> int:
    total = 1
    for op, av in items:
        total *= _item_cost(op, av, sre, in_repeat)
        if total > MAX_STEPS:
            return total
    return total


def _item_cost(op: Any, av: Any, sre: Any, in_repeat: bool) -> int:
    repeats = (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None))
    if op in repeats:
        low, high, inner = av
        if high == sre.MAXREPEAT:
            raise _Risky("has an unbounded repeat (*, + or {n,})")
        if in_repeat:
            raise _Risky("nests a repeat inside another")
        return max(1, int(high) - int(low) + 1) * _cost(inner, sre, in_repeat=True)
    if op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
        raise _Risky("uses a backreference")
    if op == sre.BRANCH:
        if in_repeat:
            raise _Risky("repeats an alternation")
        return sum(_cost(branch, sre, in_repeat=False) for branch in av[1])
    if op == sre.SUBPATTERN:
        return _cost(av[-1], sre, in_repeat=in_repeat)
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return _cost(av[1], sre, in_repeat=in_repeat)
    if op == getattr(sre, "ATOMIC_GROUP", None):
        return _cost(av, sre, in_repeat=in_repeat)
    return 1
