"""What grading returns: a key's result (:class:`CriterionResult`, with a named
constructor for each way a key comes out) and a draft's (:class:`Evaluation`)."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ._checks import Answer, CheckerFailure
from ._shadow import ShadowResult
from ._verdict import Verdict

if TYPE_CHECKING:
    from ._criterion import Criterion

Source = Literal["code", "judge"]


Status = Literal["met", "failed", "not_checked", "error"]


@dataclass(slots=True)
class CriterionResult:
    """How one criterion came out for one draft.

    ``score`` is on 0-10 (pass/fail criteria score 10 or 0); ``passed`` is whether
    the key is met; ``checked`` is False only for judge keys skipped in code-only
    grading, which are never met. ``error`` says why no answer could be had (a
    checker that raised, a judge that left the key out); such a key is not met.
    """

    key: str
    weight: float
    score: float
    passed: bool
    source: Source
    filled_by: str
    issues: tuple[str, ...] = ()
    feedback: str | None = None
    checked: bool = True
    agreement: float | None = None
    samples: tuple[bool | float, ...] = ()
    error: str | None = None
    judging: Mapping[str, Any] | None = None  # how the key was judged: a jury's votes, orders

    @classmethod
    def from_check(cls, c: Criterion, filled_by: str, result: Answer) -> CriterionResult:
        """A code key's result from what its checker (``filled_by``) said: a
        :class:`~gradeloop.CheckResult`, or a bare bool.

        A scored key is met when the checker passed and its score (10 or 0 from
        ``passed`` when it gave none) reaches the threshold; a key not met with
        nothing said gets the criterion's description as its issue. A
        :class:`~gradeloop.grading._checks.CheckerFailure` (the checker raised or
        returned junk) is an error, not the draft's failure."""
        issues: tuple[str, ...] = ()
        if isinstance(result, bool):
            passed, given, error = result, None, None
        else:
            passed, issues, given = result.passed, tuple(result.issues), result.score
            error = "; ".join(issues) if isinstance(result, CheckerFailure) else None
        if c.scale == "score":
            score = float(given if given is not None else 10 * passed)
            met = passed and score >= c.pass_threshold
        else:
            score, met = 10.0 * passed, passed
        if not met and not issues:
            issues = (f"does not meet: {c.description}",)
        feedback = "; ".join(issues) if issues else None
        return cls(c.key, c.weight, score, met, "code", filled_by, issues, feedback, error=error)

    @classmethod
    def failed(
        cls,
        c: Criterion,
        issue: str,
        *,
        filled_by: str | None = None,
        error: str | None = None,
        feedback: str | None = None,
    ) -> CriterionResult:
        """A key not met for ``issue`` (score 0), filled as the criterion says
        (``filled_by``: the checker that ran, when another). With ``error`` set (why
        no answer could be had) its status is ``error``."""
        return cls(
            key=c.key,
            weight=c.weight,
            score=0.0,
            passed=False,
            source=c.source,
            filled_by=c.filled_by if filled_by is None else filled_by,
            issues=(issue,),
            feedback=feedback,
            error=error,
        )

    @classmethod
    def not_checked(cls, c: Criterion) -> CriterionResult:
        """A judge key left out of code-only grading: never met, status ``not_checked``."""
        return cls(
            key=c.key,
            weight=c.weight,
            score=0.0,
            passed=False,
            source="judge",
            filled_by="judge",
            issues=("not checked: filled by the judge",),
            checked=False,
        )

    @property
    def name(self) -> str:
        """The criterion's key (the evaluation JSON calls it ``name``)."""
        return self.key

    @property
    def status(self) -> Status:
        """``"met"``, ``"failed"``, ``"not_checked"`` (skipped) or ``"error"``."""
        if not self.checked:
            return "not_checked"
        if self.error is not None:
            return "error"
        return "met" if self.passed else "failed"

    def to_json(self) -> dict[str, Any]:
        """The evaluation JSON's fields (``name``, ``weight``, ``score``, ``passed``, ``feedback``)
        plus ``filled_by``, ``status`` and ``issues`` (a list)."""
        out: dict[str, Any] = {
            "name": self.key,
            "weight": self.weight,
            "score": _round(self.score),
            "passed": self.passed,
            "filled_by": self.filled_by,
            "status": self.status,
            "issues": list(self.issues),
        }
        if self.feedback:
            out["feedback"] = self.feedback
        if self.agreement is not None:
            out["agreement"] = round(self.agreement, 4)
            out["samples"] = list(self.samples)
        if self.judging:
            out["judging"] = dict(self.judging)
        return out


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The merged result of grading one draft against a rubric.

    ``verdict`` holds every rubric key in ``criteria_met``; ``accepted`` is
    :func:`gradeloop.accepted` over it; ``overall_score`` is the weighted mean of
    the per-criterion scores, on 0-10, or None when keys were not checked
    (``skip_judge=True``): a score they would count 0 in is no real figure.
    ``shadows`` holds what each shadowed key's shadow source said (recorded only: it
    never changes the verdict).

    ``judge_calls`` holds the record of every judge request behind the verdict
    (:class:`~gradeloop.models.CallRecord`, cached ones included); ``judge_error`` is set on
    the failed evaluation :func:`gradeloop.grade_many` gives for a draft whose judge
    failed (its judge keys are then not met).
    """

    verdict: Verdict
    accepted: bool
    criteria: tuple[CriterionResult, ...]
    overall_score: float | None
    output_id: str = ""
    improvement_from_previous: float | None = None
    judge_called: bool = False
    shadows: tuple[ShadowResult, ...] = ()
    judge_calls: tuple[Any, ...] = ()
    judge_error: str | None = None

    @property
    def judge_cached(self) -> bool:
        """True when the verdict came from the verdict cache: no request was sent."""
        return bool(self.judge_calls) and all(getattr(c, "cached", False) for c in self.judge_calls)

    @property
    def judge_usage(self) -> Any:
        """The judge's token usage (and ``cost_usd``) behind this evaluation; None if
        no judge call was seen (no judge, or a judge that reports no calls)."""
        usages = [c.usage for c in self.judge_calls if getattr(c, "usage", None) is not None]
        return functools.reduce(operator.add, usages) if usages else None

    @property
    def disagreements(self) -> tuple[ShadowResult, ...]:
        """The shadowed keys whose shadow reached the other answer."""
        return tuple(s for s in self.shadows if s.agree is False)

    @property
    def failed_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria if not c.passed)

    @property
    def not_checked(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria if not c.checked)

    @property
    def issues(self) -> list[str]:
        return list(self.verdict.issues)

    def __getitem__(self, key: str) -> CriterionResult:
        for c in self.criteria:
            if c.key == key:
                return c
        raise KeyError(key)

    def with_ids(
        self, output_id: str, improvement_from_previous: float | None = None
    ) -> Evaluation:
        shadows = tuple(replace(s, output_id=output_id) for s in self.shadows)
        return replace(
            self,
            output_id=output_id,
            improvement_from_previous=improvement_from_previous,
            shadows=shadows,
        )

    def to_json(self) -> dict[str, Any]:
        """The evaluation JSON, as a JSON-ready dict.

        With keys not checked (code-only grading) there is no overall score to give:
        ``overall_score`` is null and ``not_checked`` lists those keys.
        """
        out: dict[str, Any] = {
            "output_id": self.output_id,
            "criteria": [c.to_json() for c in self.criteria],
            "overall_score": None if self.overall_score is None else _round(self.overall_score),
            "passed": self.accepted,
        }
        if self.not_checked:
            out["not_checked"] = list(self.not_checked)
        if self.improvement_from_previous is not None:
            out["improvement_from_previous"] = _round(self.improvement_from_previous)
        if self.shadows:
            out["shadows"] = [s.to_json() for s in self.shadows]
        if self.judge_error is not None:
            out["judge_error"] = self.judge_error
        if self.judge_calls:
            usage = self.judge_usage
            out["judge"] = {
                "calls": sum(1 for c in self.judge_calls if not getattr(c, "cached", False)),
                "cached": sum(1 for c in self.judge_calls if getattr(c, "cached", False)),
                "cost_usd": None if usage is None else usage.to_dict()["cost_usd"],
            }
        return out


def _round(x: float) -> float | None:
    """Rounded for JSON; None for a number JSON cannot hold (NaN, infinity)."""
    return round(x, 2) if math.isfinite(x) else None


__all__ = ["CriterionResult", "Evaluation", "Source", "Status"]
