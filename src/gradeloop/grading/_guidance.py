"""Score anchors and worked examples: what a criterion's judge is shown besides its text.

A scored criterion may carry ``anchors`` (score -> what a draft at that score
looks like) and any criterion the judge answers may carry ``examples`` (a text
and how it was judged: ``met`` for a pass/fail key, ``score`` for a scored one,
each with an optional ``why``). Both go into the judge's system text, which is
built only from the criteria, so they stay byte-identical from call to call and
cacheable. They are validated here, when the rubric loads, like every other
field; a long set draws a :class:`~gradeloop.errors.RubricWarning`, because it is
sent (cached or not) with every judge request.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

from ..errors import RubricWarning

__all__ = [
    "GUIDANCE_WARN_CHARS",
    "Example",
    "guidance_chars",
    "validate_anchors",
    "validate_guidance",
    "warn_if_long",
]

#: Anchors and examples of one criterion past this many characters (about 500
#: tokens at four characters a token) draw a warning when the rubric loads.
GUIDANCE_WARN_CHARS = 2000
SCORE_MIN, SCORE_MAX = 1, 10


class Example(BaseModel):
    """One worked example for the judge: a text and how it should be judged.

    ``met`` is for a pass/fail criterion, ``score`` (an integer 1-10) for a scored
    one; ``why`` says what decided it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1)
    met: StrictBool | None = None
    score: StrictInt | None = None
    why: str | None = None

    @model_validator(mode="after")
    def _one_verdict(self) -> Example:
        if not self.text.strip():
            raise ValueError("an example's text is blank; give the text the judge should see")
        if self.met is None and self.score is None:
            raise ValueError(
                "an example needs `met = true|false` (pass/fail key) or `score = 1-10` "
                "(scored key); it has neither"
            )
        if self.met is not None and self.score is not None:
            raise ValueError("an example takes `met` or `score`, not both")
        if self.score is not None and not SCORE_MIN <= self.score <= SCORE_MAX:
            raise ValueError(f"an example's score must be an integer 1-10, not {self.score}")
        return self


def validate_anchors(anchors: Mapping[Any, Any]) -> dict[int, str]:
    """Anchors as ``{score: text}`` with integer scores 1-10 and non-blank texts.

    TOML table keys are strings (``{ 1 = "..." }`` reads as ``{"1": "..."}``), so
    digit strings are accepted and turned into integers; ``"1.5"`` or ``"one"`` is not.
    """
    out: dict[int, str] = {}
    for raw, text in anchors.items():
        score = _anchor_score(raw)
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"anchor {score} needs a non-blank text: what {score} looks like")
        out[score] = text.strip()
    return dict(sorted(out.items()))


def _anchor_score(raw: Any) -> int:
    if isinstance(raw, bool):
        raise ValueError(f"anchor key {raw!r} is not a score; use integers 1-10")
    if isinstance(raw, int):
        score = raw
    elif isinstance(raw, str) and raw.strip().isdigit():
        score = int(raw.strip())
    else:
        raise ValueError(f"anchor key {raw!r} is not a score; use integers 1-10")
    if not SCORE_MIN <= score <= SCORE_MAX:
        raise ValueError(f"anchor {score} is outside 1-10; anchors name scores from 1 to 10")
    return score


def validate_guidance(
    *,
    scale: str,
    judged: bool,
    anchors: Mapping[int, str],
    examples: tuple[Example, ...],
) -> None:
    """Anchors only on scored keys; examples match the scale; both only for the judge."""
    if not anchors and not examples:
        return
    if not judged:
        raise ValueError(
            "'anchors' and 'examples' are shown to the judge, and no judge answers "
            'this key; remove them, or add shadow = "judge" to compare the judge with the checker'
        )
    if anchors and scale != "score":
        raise ValueError(
            "'anchors' describe scores; add scale = \"score\" or remove them "
            "(a pass/fail key takes examples with `met`)"
        )
    for i, example in enumerate(examples, start=1):
        if scale == "score" and example.score is None:
            raise ValueError(f"example {i} gives `met` but this key is scored; give `score = 1-10`")
        if scale != "score" and example.met is None:
            raise ValueError(
                f"example {i} gives `score` but this key is pass/fail; give `met = true|false`"
            )


def guidance_chars(anchors: Mapping[int, str], examples: tuple[Example, ...]) -> int:
    """Roughly how many characters anchors and examples add to the judge's system text."""
    total = sum(len(text) + 8 for text in anchors.values())
    for example in examples:
        total += len(example.text) + len(example.why or "") + 20
    return total


def warn_if_long(
    key: str, anchors: Mapping[int, str], examples: tuple[Example, ...], path: Path | None
) -> None:
    """A :class:`RubricWarning` when one criterion's guidance passes the size limit."""
    size = guidance_chars(anchors, examples)
    if size <= GUIDANCE_WARN_CHARS:
        return
    where = f"{path}, " if path is not None else ""
    warnings.warn(
        f"{where}criterion {key!r}: anchors and examples add about {size} characters "
        f"(~{size // 4} tokens) to every judge request; keep the examples that teach "
        "the most and shorten their texts",
        RubricWarning,
        stacklevel=4,
    )


def warn_if_fractional(key: str, threshold: float | None, path: Path | None) -> None:
    """A :class:`RubricWarning` for a judge-scored key whose threshold is not a whole
    number: the judge scores in whole numbers, so 7.5 works as 8. Said, not refused."""
    if threshold is None or threshold == int(threshold):
        return
    up = math.ceil(threshold)
    where = f"{path}, " if path is not None else ""
    warnings.warn(
        f"{where}criterion {key!r}: threshold {threshold:g} on the judge's whole-number "
        f"scale works as {up} (a score of {up - 1} fails, {up} passes); write threshold = {up}",
        RubricWarning,
        stacklevel=4,
    )
