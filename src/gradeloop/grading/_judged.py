"""The judge's part of a grade: asking it (every judge, every road), reading what it
returned strictly, and turning its verdict into each judge key's result."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from ..errors import GradeloopError, JudgeError
from ..errors._redact import scrub_chain
from ._results import CriterionResult
from ._rubric import Criterion
from ._samples import SampledVerdict
from ._strict import WireError, strict_verdict
from ._verdict import Verdict

__all__ = ["Judge", "call_judge", "from_judge", "judge_answer"]


@runtime_checkable
class Judge(Protocol):
    """Anything that can judge a draft against criteria."""

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict: ...


def call_judge(
    judge: Judge,
    task: str,
    draft: str,
    criteria: Sequence[Criterion],
    *,
    optional: Collection[str] = (),
) -> Verdict:
    """Ask the judge, and read what it returned strictly (every judge, every road).

    Whatever ``evaluate()`` returns - a :class:`Verdict`, a dict, anything else -
    goes through :func:`~gradeloop.grading._strict.strict_verdict` for the keys
    asked (``optional``: keys it may leave out, such as shadow keys); an invalid
    answer, or an exception, is a :class:`JudgeError`.
    """
    try:
        raw: Any = judge.evaluate(task, draft, criteria)
    except GradeloopError as exc:
        scrub_chain(exc)  # chained below, or raised: it may quote a key
        if isinstance(exc, JudgeError):
            raise
        raise JudgeError(f"the judge failed: {exc}", reason="api_error") from exc
    except Exception as exc:
        scrub_chain(exc)
        raise JudgeError(
            f"the judge raised {type(exc).__name__}: {exc}", reason="api_error"
        ) from exc
    return judge_answer(raw, criteria, optional=optional)


def judge_answer(
    raw: Any, criteria: Sequence[Criterion], *, optional: Collection[str] = ()
) -> Verdict:
    """What a judge returned for ``criteria``, read strictly; a :class:`JudgeError` if invalid.

    The one gate every judge's answer passes before grading uses it (the async
    path included): see :mod:`gradeloop.grading._strict` for the rules.
    """
    try:
        judged = [c for c in criteria if c.source == "judge"]
        return strict_verdict(raw, judged, optional=optional)
    except WireError as exc:
        raise JudgeError(f"the judge's verdict is invalid: {exc}", reason="invalid") from None


def from_judge(c: Criterion, v: Verdict) -> CriterionResult:
    result = _judged_result(c, v)
    sampled = v.samples.get(c.key) if isinstance(v, SampledVerdict) else None
    if sampled is None:
        return result
    detail = v.key_detail(c.key) if isinstance(v, SampledVerdict) else None
    return replace(result, agreement=sampled.agreement, samples=sampled.values, judging=detail)


def _judged_result(c: Criterion, v: Verdict) -> CriterionResult:
    fb = v.feedback.get(c.key) or None
    if c.scale == "score":
        raw = v.scores.get(c.key)
        if raw is None or not math.isfinite(raw) or not 1 <= raw <= 10:
            issue = f"the judge gave no score for {c.key!r}"
            return CriterionResult.failed(c, issue, feedback=fb, error="no score")
        score = float(raw)  # call_judge let only integers 1-10 through: never clamped
        met = score >= c.pass_threshold  # decided here, never by the judge's boolean
        issues = () if met else (f"scored {score:g}, needs {c.pass_threshold:g}",)
    else:
        claim = v.criteria_met.get(c.key)
        if claim is None:
            issue = f"the judge gave no verdict on {c.key!r}"
            return CriterionResult.failed(c, issue, feedback=fb)
        met = claim is True
        score, issues = (10.0 if met else 0.0), ()
    return CriterionResult(
        key=c.key,
        weight=c.weight,
        score=score,
        passed=met,
        source="judge",
        filled_by="judge",
        issues=issues,
        feedback=fb,
    )
