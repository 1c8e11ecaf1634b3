"""A judge's pairwise answer, read strictly: per key ``"first"``, ``"second"`` or ``"tie"``.

Every answer to ``prefer(task, first, second, criteria)`` passes through
:func:`read_choices`, whatever judge gave it (the SDK judges' parsed replies, a
custom judge's dict, a jury's majority). The rules mirror a verdict's
(:mod:`gradeloop.grading._strict`):

* every judge key asked about is answered (a missing key is invalid, never a tie);
* each answer is exactly one of the strings ``"first"``, ``"second"``, ``"tie"``
  (``"First"``, ``"a"``, ``1``, ``true`` and ``null`` are invalid, never guessed);
* keys nobody asked about are ignored.

The wire form of a reply (``{"reasoning": str, "preferred": {key: choice}}``) is read
by :func:`read_wire`; in reply *text*, a key that appears twice in one object makes
the reply ambiguous, so invalid (that check is :func:`~gradeloop.grading._strict.strict_json`'s).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..grading._strict import WireError

__all__ = ["CHOICES", "Choice", "Choices", "read_choices", "read_wire"]

Choice = Literal["first", "second", "tie"]
CHOICES: tuple[Choice, ...] = ("first", "second", "tie")


class Choices(dict[str, Choice]):
    """``{key: "first" | "second" | "tie"}``: one order's answer, with the judge's
    ``reasoning`` (empty when the judge gave none)."""

    def __init__(self, items: Mapping[str, Choice] | None = None, *, reasoning: str = "") -> None:
        super().__init__(items or {})
        self.reasoning = reasoning


def read_choices(answer: Any, keys: Iterable[str], *, where: str = "") -> Choices:
    """``answer`` (a mapping) read strictly for ``keys``; :class:`WireError` if invalid.

    ``where`` prefixes the name of a bad entry in the error (``preferred.``).
    """
    if not isinstance(answer, Mapping):
        raise WireError(
            f"{where.rstrip('.') or 'the answer'}: expected an object of "
            f"'first' / 'second' / 'tie' per key, got {_kind(answer)}"
        )
    out: dict[str, Choice] = {}
    for key in keys:
        if key not in answer:
            raise WireError(f"{where}{key}: missing")
        value = answer[key]
        if not isinstance(value, str) or value not in CHOICES:
            raise WireError(
                f"{where}{key}: expected 'first', 'second' or 'tie', got {_shown(value)}"
            )
        out[key] = value  # checked against CHOICES above
    reasoning = answer.reasoning if isinstance(answer, Choices) else ""
    return Choices(out, reasoning=reasoning)


def read_wire(data: Any, keys: Iterable[str]) -> Choices:
    """A parsed wire reply ``{"reasoning": str, "preferred": {...}}`` read strictly."""
    if not isinstance(data, Mapping):
        raise WireError(f"the reply is {_kind(data)}, not an object")
    reasoning = data.get("reasoning")
    if "reasoning" not in data:
        raise WireError("reasoning: missing")
    if not isinstance(reasoning, str):
        raise WireError(f"reasoning: expected a string, got {_kind(reasoning)}")
    if "preferred" not in data:
        raise WireError("preferred: missing")
    choices = read_choices(data["preferred"], keys, where="preferred.")
    choices.reasoning = reasoning
    return choices


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _shown(value: Any) -> str:
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    return f"a {type(value).__name__}"
