"""From a grade to a reward: the shapes, their ranges, and what a judge outage gives.

A reward is read off an :class:`~gradeloop.Evaluation` the grading core built (the
gate and the weighted overall are its own, unchanged). Ranges, before ``signed``:

* ``"score"``: the weighted overall score / 10, in [0, 1];
* ``"gate"``: 1.0 when the rubric's gate accepts the rollout, else 0.0;
* ``"gate_score"``: the gate times the score: 0.0 unless accepted, then the score;
* one key (:meth:`TRLReward.per_key`): that key's score / 10 (pass/fail keys 1 or 0).

``signed=True`` maps each to [-1, 1] (``2r - 1``). A judge that could not answer (the
request failed after its retries, or its reply left a key without an answer) is not the
policy's fault: every reward that depends on a judge key is then None, never a 0; a code
key whose checker failed is a real 0, as in every other grade.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..grading import Evaluation, Rubric
from ..grading._rubric_fields import REWARD_SHAPES

__all__ = ["RewardShape", "Shape", "key_reward", "resolve_shape", "unanswered"]

Shape = Literal["score", "gate", "gate_score"]  # REWARD_SHAPES, which the rubric's check reads


@dataclass(frozen=True)
class RewardShape:
    """How a grade becomes a reward: the shape, and whether rewards span [-1, 1]."""

    shape: Shape = "score"
    signed: bool = False

    def of(self, evaluation: Evaluation) -> float | None:
        """The reward of one graded rollout; None when the judge could not answer."""
        if unanswered(evaluation):
            return None
        if self.shape == "gate":
            value = 1.0 if evaluation.accepted else 0.0
        else:
            if evaluation.overall_score is None:  # keys left unchecked: no real figure
                return None
            # a weighted mean of 10s can come out at 10.000000000000002: keep to [0, 1]
            value = min(1.0, max(0.0, evaluation.overall_score / 10))
            if self.shape == "gate_score" and not evaluation.accepted:
                value = 0.0
        return self.signed_value(value)

    def signed_value(self, value: float) -> float:
        """``value`` (in [0, 1]) in this shape's range."""
        return 2 * value - 1 if self.signed else value

    def to_json(self) -> dict[str, Any]:
        """The shape as recorded with a step."""
        return {"shape": self.shape, "signed": self.signed}


def resolve_shape(rubric: Rubric, shape: str | None, signed: bool | None) -> RewardShape:
    """The call's shape and range, else the rubric's ``[reward]`` table, else the defaults
    (``"score"``, [0, 1]); a ValueError naming the argument for anything else."""
    table: Mapping[str, Any] = rubric.reward
    chosen = shape if shape is not None else table.get("shape", "score")
    if chosen not in REWARD_SHAPES:
        raise ValueError(
            f"shape must be one of {', '.join(map(repr, REWARD_SHAPES))}, not {chosen!r}"
        )
    sign = signed if signed is not None else table.get("signed", False)
    if not isinstance(sign, bool):
        raise ValueError(f"signed must be True or False, not {sign!r}")
    return RewardShape(cast(Shape, chosen), sign)


def unanswered(evaluation: Evaluation) -> bool:
    """Whether the judge could not answer for this rollout: its request failed, or a key
    it was asked came back without an answer (status ``error``)."""
    if evaluation.judge_error is not None:
        return True
    return any(c.source == "judge" and c.error is not None for c in evaluation.criteria)


def key_reward(evaluation: Evaluation, key: str, shape: RewardShape) -> float | None:
    """One key's reward: its score / 10 (pass/fail: 1 or 0), in ``shape``'s range; None
    for a judge key the judge did not answer. A code key that failed is a real 0."""
    result = evaluation[key]
    if result.source == "judge" and (evaluation.judge_error is not None or result.error):
        return None
    if not result.checked:
        return None
    return shape.signed_value(min(1.0, max(0.0, result.score / 10)))
