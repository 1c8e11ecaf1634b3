"""``matches_reference``: the draft against the reference answer given with it.

The reference comes from the draft's :class:`gradeloop.grading.CheckContext`
(``grade(..., reference=...)``, ``gradeloop grade --reference FILE``, or
``"reference"`` in a JSONL line). By default the two must be equal once runs of
whitespace are made one space and the ends trimmed; ``normalize`` picks exact
equality (``"none"``) or also ignoring case (``"case"``). With ``min_similarity``
the check passes when the normalised texts are at least that similar, and its
score (0-10) is the similarity.

Similarity is the multiset Jaccard index of the two texts' word bigrams: linear
in their length, so a long draft costs little (``difflib`` is quadratic there).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field

from gradeloop import CheckResult
from gradeloop.grading import CheckContext

from ..markdown._lines import quote

__all__ = ["matches_reference", "similarity"]

Normalize = Literal["none", "whitespace", "case"]
Similarity = Annotated[float, Field(gt=0, le=1)]
_SPACE = re.compile(r"\s+")


def _normal(text: str, how: Normalize) -> str:
    if how == "none":
        return text
    text = _SPACE.sub(" ", text).strip()
    return text.casefold() if how == "case" else text


def _bigrams(text: str) -> Counter[tuple[str, str]]:
    words = text.split()
    if len(words) == 1:
        return Counter({(words[0], ""): 1})
    return Counter(itertools.pairwise(words))


def similarity(a: str, b: str) -> float:
    """0.0 (no word pair shared) to 1.0 (the same words in the same order)."""
    if a == b:
        return 1.0
    ca, cb = _bigrams(a), _bigrams(b)
    if not ca and not cb:
        return 1.0
    return sum((ca & cb).values()) / sum((ca | cb).values())


def _first_difference(a: str, b: str) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def matches_reference(
    text: str,
    *,
    normalize: Normalize = "whitespace",
    min_similarity: Similarity | None = None,
    context: CheckContext | None = None,
) -> CheckResult:
    """The text equals the reference answer (after ``normalize``), or is that similar to it."""
    reference = context.reference if context is not None else None
    if reference is None:
        return CheckResult(
            False,
            [
                "no reference answer was given for this draft; give one (grade(..., "
                "reference=...), --reference FILE, or 'reference' in the JSONL line)"
            ],
        )
    got, want = _normal(text, normalize), _normal(reference, normalize)
    if min_similarity is not None:
        ratio = similarity(got, want)
        score = round(ratio * 10, 2)
        if ratio >= min_similarity:
            return CheckResult(True, score=score)
        return CheckResult(
            False,
            [f"the text is {ratio:.0%} similar to the reference; it needs {min_similarity:.0%}"],
            score=score,
        )
    if got == want:
        return CheckResult(True)
    at = _first_difference(got, want)
    how = {"none": "exactly", "whitespace": "up to whitespace", "case": "up to whitespace and case"}
    return CheckResult(
        False,
        [
            f"the text does not match the reference {how[normalize]}: they differ from "
            f"character {at + 1} (text: {quote(got[at : at + 40])}, "
            f"reference: {quote(want[at : at + 40])})"
        ],
    )
