"""``string_check`` and ``text_similarity``: the draft against a reference string.

The two code-filled graders of OpenAI's evals, as checkers (``gradeloop
import-graders`` writes them): ``string_check`` compares with ``operation`` ``eq``
(equal), ``ne`` (different), ``like`` (contains) or ``ilike`` (contains, ignoring
case); ``text_similarity`` scores a ``metric`` (``fuzzy_match``, ``bleu``, ``gleu``,
``rouge_1`` ... ``rouge_5``, ``rouge_l``) from 0 to 10 and passes at ``min_score``
(0-1) when one is given. The reference is ``reference`` (text in the rubric), or the
draft's metadata field ``reference_field`` (a JSONL line's ``"metadata"``, a training
dataset's column), or else the draft's own reference answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from gradeloop import CheckResult
from gradeloop.grading import CheckContext

from ..markdown._lines import quote
from ._metrics import similarity

__all__ = ["CHECKERS", "string_check", "text_similarity"]

Operation = Literal["eq", "ne", "like", "ilike"]
Metric = Literal[
    "fuzzy_match", "bleu", "gleu", "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l"
]
Share = Annotated[float, Field(ge=0, le=1)]
FieldName = Annotated[str, Field(min_length=1)]


def _reference(
    reference: str | None, reference_field: str | None, context: CheckContext | None
) -> str | CheckResult:
    """The reference text, or the failed result that says why there is none."""
    if reference is not None:
        return reference
    if reference_field is not None:
        meta = context.metadata if context is not None else {}
        value = (meta or {}).get(reference_field)
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return CheckResult(
            False,
            [
                f"the draft's metadata has no text field {reference_field!r} to compare with; "
                'give it (a JSONL line\'s "metadata", a dataset column of that name)'
            ],
        )
    ref = context.reference if context is not None else None
    if isinstance(ref, str):
        return ref
    return CheckResult(
        False,
        [
            "no reference to compare with: set the option reference or reference_field, "
            "or give the draft a reference answer"
        ],
    )


def string_check(
    text: str,
    *,
    operation: Operation,
    reference: str | None = None,
    reference_field: FieldName | None = None,
    context: CheckContext | None = None,
) -> CheckResult:
    """The text equals (``eq``), differs from (``ne``) or contains (``like``; ``ilike``
    ignoring case) the reference."""
    ref = _reference(reference, reference_field, context)
    if isinstance(ref, CheckResult):
        return ref
    if operation == "eq":
        ok, how = text == ref, "equal"
    elif operation == "ne":
        ok, how = text != ref, "differ from"
    elif operation == "like":
        ok, how = ref in text, "contain"
    else:
        ok, how = ref.casefold() in text.casefold(), "contain (ignoring case)"
    if ok:
        return CheckResult(True)
    return CheckResult(False, [f"the text does not {how} {quote(ref)}"])


def text_similarity(
    text: str,
    *,
    metric: Metric,
    min_score: Share | None = None,
    reference: str | None = None,
    reference_field: FieldName | None = None,
    context: CheckContext | None = None,
) -> CheckResult:
    """The text's ``metric`` similarity to the reference, as a 0-10 score; fails below
    ``min_score`` (0-1) when one is given."""
    ref = _reference(reference, reference_field, context)
    if isinstance(ref, CheckResult):
        return ref
    value = similarity(metric, text, ref)
    score = round(10 * value, 4)
    if min_score is not None and value < min_score:
        return CheckResult(
            False, [f"{metric} similarity {value:.3f} is below {min_score:g}"], score=score
        )
    return CheckResult(True, score=score)


CHECKERS: dict[str, Callable[..., Any]] = {
    "string_check": string_check,
    "text_similarity": text_similarity,
}
"""The checkers this module contributes, by registry name."""
