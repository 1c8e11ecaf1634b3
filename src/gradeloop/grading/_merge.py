"""Merging per-key results into one evaluation: the score, the issues, the merged
verdict and the gate; and the evaluation a code-only rubric keeps for a draft that
met every key."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ._results import _PENDING, CriterionResult, Evaluation, _evaluation, _new, _setattr
from ._rubric import Criterion, Rubric
from ._shadow import ShadowResult
from ._verdict import Verdict, accepted, built_verdict


def code_evaluation(
    rubric: Rubric,
    results: Mapping[str, CriterionResult],
    output_id: str = "",
    calls: tuple[Any, ...] = (),
) -> Evaluation:
    """The evaluation of a rubric with code keys alone (and no shadows), from its results.

    A draft that met every key with nothing to say is the usual case, and its
    evaluation is the same every time (:class:`EveryKeyMet`): the first one
    :func:`merge` makes is kept, and handed out again as fresh copies."""
    found = tuple(map(results.get, rubric.keys))
    every_met: EveryKeyMet | None = rubric._all_met
    # the very same results (not merely equal ones: comparing a failed key's result
    # field by field would cost a draft that failed more than the check saves)
    if every_met is not None and all(map(operator.is_, found, every_met.criteria)):
        return every_met.evaluation(output_id, calls)
    evaluation = merge(rubric, results, None, judge_called=False, judge_calls=calls,
                       output_id=output_id)  # fmt: skip
    kept = rubric._met
    if every_met is None and all(r is not None and r is kept.get(r.key) for r in found):
        rubric._all_met = EveryKeyMet(evaluation)  # every key met with nothing to say
    return evaluation


class EveryKeyMet:
    """What :func:`merge` made of a code-only rubric's draft on which every key was met
    with nothing to say, kept on the rubric to be handed out again.

    Such a draft's results are the rubric's shared ones (:func:`_met_result`), and
    ``merge`` is a function of the results and the rubric alone: every later draft
    whose results are those same results merges to the same evaluation, whose
    containers (the verdict's dicts and lists) are fresh copies of these on every
    draft, so a caller changing one changes nothing else. A test holds it to
    ``merge``, over random rubrics."""

    def __init__(self, made: Evaluation) -> None:
        v = made.verdict
        self.criteria = made.criteria
        # the verdict's values, apart from the verdict handed out (its caller may change it)
        self._verdict = (
            v.reasoning, dict(v.criteria_met), v.passed, tuple(v.issues), dict(v.scores),
            dict(v.feedback),
        )  # fmt: skip
        self._fields: dict[str, Any] = {  # an evaluation's fields, but for id and calls
            _PENDING: self, "accepted": made.accepted, "criteria": made.criteria,
            "overall_score": made.overall_score, "output_id": "",
            "improvement_from_previous": None, "judge_called": False, "shadows": (),
            "judge_calls": (), "judge_error": None,
        }  # fmt: skip

    def evaluation(self, output_id: str, calls: tuple[Any, ...]) -> Evaluation:
        """A fresh evaluation equal to the kept one (with this draft's id and calls).

        Its verdict is made when first read (:class:`_VerdictOnRead`): every value
        in it is known already, and a caller who reads only ``accepted``, the
        criteria or the JSON never needs the object and its five containers."""
        fields = self._fields.copy()  # a copy and two stores: cheaper than a new dict
        fields["output_id"] = output_id
        fields["judge_calls"] = calls
        evaluation = _new(Evaluation)
        _setattr(evaluation, "__dict__", fields)
        return evaluation

    def verdict(self) -> Verdict:
        """A fresh verdict equal to the kept one."""
        reasoning, met, passed, issues, scores, feedback = self._verdict
        return built_verdict(
            reasoning, met.copy(), passed, list(issues), scores.copy(), feedback.copy()
        )


def overall(results: Sequence[CriterionResult]) -> float:
    """The weighted mean of the criterion scores, on 0-10."""
    total = sum(r.weight for r in results)
    if total <= 0:
        return 0.0
    return sum(r.weight * r.score for r in results) / total


def merge(
    rubric: Rubric,
    results: Mapping[str, CriterionResult],
    verdict: Verdict | None,
    *,
    shadows: tuple[ShadowResult, ...] = (),
    judge_called: bool | None = None,
    judge_calls: tuple[Any, ...] = (),
    output_id: str = "",
) -> Evaluation:
    """Merge per-key results (and the judge's verdict) into one Evaluation.

    ``judge_called`` defaults to whether there is a verdict."""
    # one pass over the keys: what the gate, the score and the verdict need (this runs
    # for every draft, so it is written for speed)
    checked = every_met = True
    total = weighted = 0.0
    issues: list[str] = []
    judged: list[str] = []
    found: list[CriterionResult] = []
    met: dict[str, bool] = {}
    feedback: dict[str, str] = {}
    get = results.get
    for c in rubric:
        r = get(c.key) or _unfilled(c)
        found.append(r)
        key, passed, weight = r.key, r.passed, r.weight
        met[key] = passed
        if r.feedback:
            feedback[key] = r.feedback
        if not r.checked:
            checked = False
        if not passed:
            every_met = False
        total += weight
        weighted += weight * r.score
        if r.issues:
            own = [f"{key}: {i}" for i in r.issues]
            if r.source == "code" or not r.checked:
                issues.extend(own)
            else:
                judged.extend(own)
    # With keys not checked there is no overall score to give (they would count 0):
    # None, and not blamed, as the gate already fails on the unchecked keys themselves.
    score = (0.0 if total <= 0 else weighted / total) if checked else None
    if verdict is not None:
        issues.extend(verdict.issues)
        issues.extend(judged)
    below = False
    if score is not None and not math.isfinite(score):  # NaN compares false: never a pass
        below = True
        issues.append("the overall score is not a finite number; check the weights")
    elif score is not None and rubric.pass_score is not None and score < rubric.pass_score:
        below = True
        issues.append(
            f"overall score {score:.2f} is below the rubric's pass_score {rubric.pass_score:g}"
        )
    # The gate decides: the judge's own claim and every key must agree on a pass,
    # so either one saying "no" is a "no" (and says why, for the next revision).
    claim = verdict.passed if verdict is not None else True
    if not claim and every_met and not below:
        issues.append(
            "the judge did not pass the draft (passed=false) although it marked every "
            "criterion met; see its reasoning"
        )
    ordered = tuple(found)
    scored = rubric.scored_keys
    if shadows and output_id:
        shadows = tuple(replace(x, output_id=output_id) for x in shadows)
    merged = built_verdict(  # every value here is gradeloop's own, checked before
        verdict.reasoning if verdict is not None else "Every key was graded in code.",
        met,
        bool(claim and every_met and not below),
        _dedupe(issues) if issues else [],
        {r.key: r.score for r in ordered if r.key in scored} if scored else {},
        feedback,
    )
    return _evaluation(
        merged,
        accepted(merged, rubric.keys),
        ordered,
        score,
        verdict is not None if judge_called is None else judge_called,
        output_id,
        shadows,
        judge_calls,
    )


def _unfilled(c: Criterion) -> CriterionResult:
    return CriterionResult(
        c.key, c.weight, 0.0, False, c.source, c.filled_by, ("no one filled this criterion",)
    )


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i.strip()))


__all__ = ["EveryKeyMet", "code_evaluation", "merge", "overall"]
