"""Merging per-key results into one evaluation: the score, the issues, the merged
verdict and the gate (every draft, whoever filled its keys)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ._results import CriterionResult, Evaluation
from ._rubric import Criterion, Rubric
from ._shadow import ShadowResult
from ._verdict import Verdict, accepted


def overall(results: Sequence[CriterionResult]) -> float:
    """The weighted mean of the criterion scores, on 0-10."""
    total = weighted = 0.0
    for r in results:  # one pass: merge() asks this of every draft
        total += r.weight
        weighted += r.weight * r.score
    if total <= 0:
        return 0.0
    return weighted / total


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
    """Merge per-key results (and the judge's verdict) into one Evaluation; the
    gate, :func:`~gradeloop.accepted`, decides it.

    ``judge_called`` defaults to whether there is a verdict."""
    found: list[CriterionResult] = []
    met: dict[str, bool] = {}
    scores: dict[str, float] = {}
    feedback: dict[str, str] = {}
    code_issues: list[str] = []  # the code keys' (and the unchecked keys')
    judge_issues: list[str] = []  # the judge keys': they come with its verdict
    scored = rubric.scored_keys
    every_checked = True
    for c in rubric:
        r = results.get(c.key) or _unfilled(c)
        found.append(r)
        key = r.key
        met[key] = r.passed
        every_checked = every_checked and r.checked
        if key in scored:
            scores[key] = r.score
        if r.feedback:
            feedback[key] = r.feedback
        if r.issues:
            own = code_issues if r.source == "code" or not r.checked else judge_issues
            own.extend([f"{key}: {i}" for i in r.issues])
    # With keys not checked there is no overall score to give (they would count 0):
    # None, and not blamed, as the gate already fails on the unchecked keys themselves.
    score = overall(found) if every_checked else None
    issues = code_issues
    if verdict is not None:
        issues += verdict.issues
        issues += judge_issues
    below = False
    if score is not None and not math.isfinite(score):  # NaN compares false: never a pass
        below = True
        issues.append("the overall score is not a finite number; check the weights")
    elif score is not None and rubric.pass_score is not None and score < rubric.pass_score:
        below = True
        issues.append(
            f"overall score {score:.2f} is below the rubric's pass_score {rubric.pass_score:g}"
        )
    # The judge's own claim and every key must agree on a pass, so either one saying
    # "no" is a "no" (and says why, for the next revision).
    claim = verdict.passed if verdict is not None else True
    every_met = all(met.values())
    if not claim and every_met and not below:
        issues.append(
            "the judge did not pass the draft (passed=false) although it marked every "
            "criterion met; see its reasoning"
        )
    merged = Verdict(
        reasoning=verdict.reasoning if verdict is not None else "Every key was graded in code.",
        criteria_met=met,
        passed=claim and every_met and not below,
        issues=_dedupe(issues),
        scores=scores,
        feedback=feedback,
    )
    if output_id:
        shadows = tuple(replace(x, output_id=output_id) for x in shadows)
    return Evaluation(
        verdict=merged,
        accepted=accepted(merged, rubric.keys),
        criteria=tuple(found),
        overall_score=score,
        output_id=output_id,
        judge_called=verdict is not None if judge_called is None else judge_called,
        shadows=shadows,
        judge_calls=judge_calls,
    )


def _unfilled(c: Criterion) -> CriterionResult:
    return CriterionResult.failed(c, "no one filled this criterion")


def _dedupe(items: Sequence[str]) -> list[str]:
    if not items:  # most drafts that pass: nothing to go through
        return []
    return list(dict.fromkeys(i for i in items if i.strip()))


__all__ = ["merge", "overall"]
