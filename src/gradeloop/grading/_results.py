"""What grading returns: a key's result (:class:`CriterionResult`) and a draft's
(:class:`Evaluation`), and how grading builds them for every draft without their
generic constructors (tests hold each to the constructor)."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ._shadow import (
    ShadowResult,
)
from ._verdict import Verdict

Source = Literal["code", "judge"]


Status = Literal["met", "failed", "not_checked", "error"]


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Evaluation:
    """The merged result of grading one draft against a rubric.

    ``verdict`` holds every rubric key in ``criteria_met``; ``accepted`` is
    :func:`gradeloop.accepted` over it; ``overall_score`` is the weighted mean of
    the per-criterion scores, on 0-10, or None when keys were not checked
    (``skip_judge=True``): a score they would count 0 in is no real figure.
    ``shadows`` holds what each shadowed key's shadow source said (recorded only: it
    never changes the verdict).

    ``judge_calls`` holds the record of every judge request behind the verdict
    (:class:`~gradeloop.CallRecord`, cached ones included); ``judge_error`` is set on
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


_PENDING = "_verdict_from"  # where an evaluation made by EveryKeyMet keeps its maker


class _VerdictOnRead:
    """``Evaluation.verdict`` for an evaluation :class:`EveryKeyMet` made without one:
    the verdict is made on the first read and kept in the instance (from then on the
    instance's own attribute answers, as for any other evaluation). Only such an
    evaluation reaches this: every other one holds its verdict from its ``__init__``.
    Equality, ``repr``, ``replace``, ``asdict``, copies and pickles read the field,
    so they see the verdict; a test holds each to the eager evaluation."""

    def __get__(self, obj: Evaluation | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        fields = obj.__dict__
        # setdefault: two threads reading at once keep (and get) one verdict
        return fields.setdefault("verdict", fields[_PENDING].verdict())


def _evaluation_state(self: Evaluation) -> dict[str, Any]:
    """What pickling and copying an Evaluation keep: its fields, the verdict made."""
    state = dict(vars(self))
    if _PENDING in state:
        state["verdict"] = self.verdict
        del state[_PENDING]
    return state


# Set on the class after the dataclass is made, so the generated __init__ and the
# field list stay the dataclass's own (a non-data descriptor: an instance's own
# ``verdict`` wins over it).
setattr(Evaluation, "verdict", _VerdictOnRead())  # noqa: B010
setattr(Evaluation, "__getstate__", _evaluation_state)  # noqa: B010

_new = object.__new__
_setattr = object.__setattr__


def _code_result(
    key: str,
    weight: float,
    score: float,
    passed: bool,
    filled_by: str,
    issues: tuple[str, ...],
    error: str | None,
) -> CriterionResult:
    """``CriterionResult(key, weight, score, passed, "code", filled_by, issues, ...)``
    built without the frozen dataclass's field-by-field ``__init__`` (a third of a
    cheap check's bookkeeping); every field is set, and a test compares the two."""
    fields = _CODE_FIELDS.copy()  # a copy and eight stores: cheaper than a new dict of 13
    fields["key"] = key
    fields["weight"] = weight
    fields["score"] = score
    fields["passed"] = passed
    fields["filled_by"] = filled_by
    fields["issues"] = issues
    fields["feedback"] = "; ".join(issues) or None
    fields["error"] = error
    result = _new(CriterionResult)
    _setattr(result, "__dict__", fields)
    return result


# a code key's result, in field order: what every code key has, and places for the rest
_CODE_FIELDS: dict[str, Any] = {
    "key": "", "weight": 0.0, "score": 0.0, "passed": False, "source": "code", "filled_by": "",
    "issues": (), "feedback": None, "checked": True, "agreement": None, "samples": (),
    "error": None, "judging": None,
}  # fmt: skip


def _evaluation(
    verdict: Verdict,
    accepted: bool,
    criteria: tuple[CriterionResult, ...],
    overall_score: float | None,
    judge_called: bool,
    output_id: str,
    shadows: tuple[ShadowResult, ...],
    judge_calls: tuple[Any, ...],
) -> Evaluation:
    """``Evaluation(verdict=..., ...)`` built as :func:`_code_result` builds a result,
    without the frozen dataclass's field-by-field ``__init__`` (one per draft); every
    field is set, and a test compares the two."""
    evaluation = _new(Evaluation)
    _setattr(evaluation, "__dict__", {
        "verdict": verdict, "accepted": accepted, "criteria": criteria,
        "overall_score": overall_score, "output_id": output_id,
        "improvement_from_previous": None, "judge_called": judge_called, "shadows": shadows,
        "judge_calls": judge_calls, "judge_error": None,
    })  # fmt: skip
    return evaluation


__all__ = ["CriterionResult", "Evaluation", "Source", "Status"]
