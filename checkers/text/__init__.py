"""Deterministic text checks: regex, contains / not_contains, starts / ends, length.

Also registers ``no_placeholders`` and ``required_sections`` (their code lives in
``._placeholders`` and ``._sections``). Every checker takes the draft as its
first argument; its keyword-only parameters are its rubric options. None of them
raises on any text, and none runs anything found in the draft.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from gradeloop import CheckResult
from gradeloop.grading import CheckContext, linear_regex

from .._options import Count, NonEmpty, not_below, one_of_required, regex_error
from ..markdown._lines import line_of, quote, split_lines
from ._placeholders import no_placeholders
from ._reference import matches_reference
from ._sections import required_sections
from ._templates import Template, TemplateRegex, expand_values, render_pattern

MAX_QUOTED = 5  # matches quoted per issue list; the rest are counted, not listed


def _flags(ignore_case: bool, multiline: bool = False, dotall: bool = False) -> re.RegexFlag:
    flags = re.NOFLAG
    if ignore_case:
        flags |= re.IGNORECASE
    if multiline:
        flags |= re.MULTILINE
    if dotall:
        flags |= re.DOTALL
    return flags


def _where(text: str, start: int, found: str) -> str:
    """``"x" on line 3: "the whole line"`` for a match of ``found`` at ``start``."""
    n = line_of(text, start)
    shown = quote(found, 40) if found else "an empty match"
    return f"{shown} on line {n}: {quote(split_lines(text)[n - 1])}"


def regex(
    text: str,
    *,
    pattern: TemplateRegex,
    must_match: bool = True,
    ignore_case: bool = False,
    multiline: bool = False,
    dotall: bool = False,
    context: CheckContext | None = None,
) -> CheckResult:
    """The text matches (or, with ``must_match=false``, never matches) a regular expression.

    ``pattern`` is a Python ``re`` pattern searched anywhere in the text, in time
    linear in the text (RE2 runs one Python would backtrack on; one neither can run
    so is refused when the rubric loads); ``multiline`` makes ``^``/``$`` match at
    every line, ``dotall`` lets ``.`` match newlines. It may name ``{task}``, ``{reference}`` or
    ``{metadata[name]}``, filled in (escaped) from the draft's context.
    """
    pattern, missing = render_pattern(pattern, context)
    if missing is not None:
        return CheckResult(False, [missing])
    problem = regex_error(pattern)
    if problem is not None:
        return CheckResult(False, [problem])
    # linear in the text whatever the pattern (RE2 for one Python would backtrack on)
    compiled = linear_regex(pattern, ignore_case=ignore_case, multiline=multiline, dotall=dotall)
    if must_match:
        if compiled.search(text) is not None:
            return CheckResult(True)
        return CheckResult(False, [f"nothing in the text matches the required pattern `{pattern}`"])
    hits = list(compiled.finditer(text))
    if not hits:
        return CheckResult(True)
    issues = [
        f"forbidden pattern `{pattern}` matches {_where(text, m.start(), m.group(0))}"
        for m in hits[:MAX_QUOTED]
    ]
    if len(hits) > MAX_QUOTED:
        issues.append(f"... and {len(hits) - MAX_QUOTED} more matches of `{pattern}`")
    return CheckResult(False, issues)


Values = Annotated[tuple[Template, ...], Field(min_length=1)]
Mode = Literal["all", "any"]


def _finder(value: str, ignore_case: bool, whole_word: bool) -> re.Pattern[str]:
    body = re.escape(value)
    if whole_word:
        # lookarounds rather than \b, so values that start or end with punctuation work
        body = rf"(?<!\w){body}(?!\w)"
    return re.compile(body, _flags(ignore_case))


def _found(
    text: str, values: Sequence[str], ignore_case: bool, whole_word: bool
) -> dict[str, re.Match[str] | None]:
    return {v: _finder(v, ignore_case, whole_word).search(text) for v in dict.fromkeys(values)}


def _how(ignore_case: bool, whole_word: bool) -> str:
    parts = [p for p, on in (("ignoring case", ignore_case), ("as a whole word", whole_word)) if on]
    return f" ({', '.join(parts)})" if parts else ""


def contains(
    text: str,
    *,
    values: Values,
    mode: Mode = "all",
    ignore_case: bool = False,
    whole_word: bool = False,
    context: CheckContext | None = None,
) -> CheckResult:
    """The text contains every one of ``values`` (``mode="any"``: at least one).

    A value may name ``{task}``, ``{reference}`` or ``{metadata[name]}``.
    """
    wanted, missing = expand_values(values, context)
    if missing:
        return CheckResult(False, missing)
    if not wanted:
        return CheckResult(False, ["checker 'contains' needs at least one value"])
    found = _found(text, wanted, ignore_case, whole_word)
    missing = [v for v, m in found.items() if m is None]
    how = _how(ignore_case, whole_word)
    if mode == "any":
        if len(missing) < len(found):
            return CheckResult(True)
        listing = ", ".join(repr(v) for v in missing)
        return CheckResult(False, [f"the text contains none of {listing}{how}; add one of them"])
    if not missing:
        return CheckResult(True)
    return CheckResult(False, [f"the text does not contain {v!r}{how}; add it" for v in missing])


def not_contains(
    text: str,
    *,
    values: Values,
    mode: Mode = "any",
    ignore_case: bool = False,
    whole_word: bool = False,
    context: CheckContext | None = None,
) -> CheckResult:
    """The text contains none of ``values`` (``mode="all"``: not all of them at once).

    The negation of ``contains`` with the same mode: by default any one of the
    values fails the check. Values may name context fields, as for ``contains``.
    """
    banned, missing = expand_values(values, context)
    if missing:
        return CheckResult(False, missing)
    if not banned:
        return CheckResult(False, ["checker 'not_contains' needs at least one value"])
    found = _found(text, banned, ignore_case, whole_word)
    present = {v: m for v, m in found.items() if m is not None}
    if not present or (mode == "all" and len(present) < len(found)):
        return CheckResult(True)
    how = _how(ignore_case, whole_word)
    issues = [
        f"remove forbidden {v!r}{how}, found as {_where(text, m.start(), m.group(0))}"
        for v, m in present.items()
    ]
    if mode == "all":
        issues.insert(0, "the text contains every one of the values that must not all appear")
    return CheckResult(False, issues)


def _edge(text: str, value: str, ignore_case: bool, at_start: bool) -> bool:
    body = text.strip()
    if ignore_case:
        body, value = body.casefold(), value.casefold()
    return body.startswith(value) if at_start else body.endswith(value)


def starts_with(text: str, *, value: NonEmpty, ignore_case: bool = False) -> CheckResult:
    """The text, leading whitespace aside, starts with ``value``."""
    if _edge(text, value, ignore_case, at_start=True):
        return CheckResult(True)
    head = text.strip()[: max(len(value), 20)]
    return CheckResult(False, [f"the text must start with {value!r} but starts with {quote(head)}"])


def ends_with(text: str, *, value: NonEmpty, ignore_case: bool = False) -> CheckResult:
    """The text, trailing whitespace aside, ends with ``value``."""
    if _edge(text, value, ignore_case, at_start=False):
        return CheckResult(True)
    tail = text.strip()[-max(len(value), 20) :]
    return CheckResult(False, [f"the text must end with {value!r} but ends with {quote(tail)}"])


_BOUNDS = ("min_words", "max_words", "min_chars", "max_chars", "min_lines", "max_lines")


def _measure(text: str) -> dict[str, int]:
    body = text.strip()
    return {
        "words": len(body.split()),
        "chars": len(body),
        "lines": sum(1 for line in split_lines(body) if line.strip()),
    }


def length(
    text: str,
    *,
    min_words: Count | None = None,
    max_words: Annotated[Count | None, not_below("min_words")] = None,
    min_chars: Count | None = None,
    max_chars: Annotated[Count | None, not_below("min_chars")] = None,
    min_lines: Count | None = None,
    max_lines: Annotated[
        Count | None,
        Field(validate_default=True),
        not_below("min_lines"),
        one_of_required(_BOUNDS),
    ] = None,
) -> CheckResult:
    """The text's length in words, characters and/or non-blank lines is within bounds.

    Words are runs of non-whitespace; characters and lines are counted after
    stripping leading and trailing whitespace; blank lines do not count.
    """
    bounds = dict(
        zip(
            _BOUNDS, (min_words, max_words, min_chars, max_chars, min_lines, max_lines), strict=True
        )
    )
    if all(b is None for b in bounds.values()):
        return CheckResult(False, ["checker 'length' needs at least one of: " + ", ".join(_BOUNDS)])
    measured = _measure(text)
    issues: list[str] = []
    for name, bound in bounds.items():
        if bound is None:
            continue
        kind, unit = name.split("_")
        have = measured[unit]
        if kind == "min" and have < bound:
            issues.append(
                f"the text has {have} {unit}; it needs at least {bound} (add about {bound - have})"
            )
        elif kind == "max" and have > bound:
            issues.append(
                f"the text has {have} {unit}; the maximum is {bound} (cut about {have - bound})"
            )
    return CheckResult(not issues, issues)


CHECKERS: dict[str, Callable[..., Any]] = {
    "regex": regex,
    "contains": contains,
    "not_contains": not_contains,
    "starts_with": starts_with,
    "ends_with": ends_with,
    "length": length,
    "matches_reference": matches_reference,
    "no_placeholders": no_placeholders,
    "required_sections": required_sections,
}
"""The checkers this module contributes, by registry name."""
