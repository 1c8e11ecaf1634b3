"""Option types for the built-in checkers, validated when a rubric loads.

gradeloop builds each checker's options model from its signature, so these
``Annotated`` aliases are how a bad option (a regex that does not compile, a
minimum above its maximum) becomes a ``RubricError`` at load instead of a failed
criterion in the middle of a run. The checkers still guard against bad values
themselves, because anyone can call them directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import AfterValidator, Field, ValidationInfo

from gradeloop.grading import linear_regex


def regex_error(pattern: str) -> str | None:
    """Why ``pattern`` does not compile, or cannot be searched in time linear in the
    text (:func:`gradeloop.grading.linear_regex`), or None when it can."""
    try:
        linear_regex(pattern)
    except ValueError as exc:
        return str(exc)
    return None


def _compiles(pattern: str) -> str:
    problem = regex_error(pattern)
    if problem is not None:
        raise ValueError(problem)
    return pattern


Regex = Annotated[str, Field(min_length=1), AfterValidator(_compiles)]
"""A Python regular expression that compiles and can be searched in linear time."""

NonEmpty = Annotated[str, Field(min_length=1)]
"""A string with at least one character."""

Count = Annotated[int, Field(ge=0, strict=True)]
"""A whole number >= 0 (strict: ``"40"`` or ``40.0`` in a rubric is a mistake, not 40)."""

T = TypeVar("T")


def not_below(low_name: str) -> AfterValidator:
    """Reject a maximum below the minimum named ``low_name`` (declared before it)."""

    def check(value: T, info: ValidationInfo) -> T:
        low = info.data.get(low_name)
        if value is not None and low is not None and low > value:
            raise ValueError(
                f"{info.field_name} ({value}) is below {low_name} ({low}); "
                f"no text could pass, raise {info.field_name} or lower {low_name}"
            )
        return value

    return AfterValidator(check)


def one_of_required(names: Sequence[str], *, exactly_one: bool = False) -> AfterValidator:
    """Require at least one (or exactly one) of ``names`` to be set.

    Attach it, with ``Field(validate_default=True)``, to the last of ``names`` in
    the signature, so that it runs even when that option is not given and sees
    every earlier one in ``info.data``.
    """

    def check(value: T, info: ValidationInfo) -> T:
        given = [n for n in names if n != info.field_name and info.data.get(n) is not None]
        if value is not None:
            given.append(str(info.field_name))
        listing = ", ".join(names)
        if not given:
            raise ValueError(f"set {'one' if exactly_one else 'at least one'} of: {listing}")
        if exactly_one and len(given) > 1:
            raise ValueError(f"set only one of: {listing} (got {', '.join(given)})")
        return value

    return AfterValidator(check)
