"""What a loop returns: every iteration, and the draft it stands behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..grading._detail import detail_json
from ..grading._grade import Evaluation
from ..models._usage import Usage

StopReason = Literal[
    "passed",
    "max_rounds",
    "stagnation",
    "evaluator_failed",
    "generator_failed",
    "token_budget",
    "cost_budget",
    "time_budget",
]


@dataclass
class Iteration:
    """One draft and what happened to it.

    ``evaluation`` is None when the judge failed (``judge_error`` says why) or when
    the draft was never judged (a round cap below 1). ``reused_from`` names the
    output whose verdict was reused for an identical draft. ``feedback`` is the
    bullet text of the last valid evaluation's issues at this iteration: what the
    next revision receives, if one follows.
    """

    iteration: int
    output_id: str
    content: str
    generation_time_ms: float
    generation_usage: Usage = field(default_factory=Usage)
    evaluation: Evaluation | None = None
    judge_error: str | None = None
    reused_from: str | None = None
    evaluation_time_ms: float | None = None
    evaluation_usage: Usage = field(default_factory=Usage)
    feedback: str | None = None

    @property
    def judged(self) -> bool:
        return self.evaluation is not None

    @property
    def usage(self) -> Usage:
        return self.generation_usage + self.evaluation_usage

    @property
    def failed_keys(self) -> list[str]:
        return list(self.evaluation.failed_keys) if self.evaluation else []

    def generation_json(self) -> dict[str, Any]:
        """The generation JSON: ``{output_id, content, iteration, generation_time_ms}``."""
        return {
            "output_id": self.output_id,
            "content": self.content,
            "iteration": self.iteration,
            "generation_time_ms": round(self.generation_time_ms, 3),
        }

    def to_record(self) -> dict[str, Any]:
        """The full record, as the history store keeps it."""
        return {
            **self.generation_json(),
            "evaluation": self.evaluation.to_json() if self.evaluation else None,
            "detail": detail_json(self.evaluation) if self.evaluation else None,
            "judge_error": self.judge_error,
            "reused_from": self.reused_from,
            "feedback": self.feedback,
            "evaluation_time_ms": (
                round(self.evaluation_time_ms, 3) if self.evaluation_time_ms is not None else None
            ),
            "usage": self.usage.to_dict(),
            "generation_usage": self.generation_usage.to_dict(),
            "evaluation_usage": self.evaluation_usage.to_dict(),
            "failed_keys": self.failed_keys,
        }

    def history_json(self) -> dict[str, Any]:
        """This iteration in the history JSON's shape."""
        if self.evaluation is not None:
            evaluation: dict[str, Any] = {
                "overall_score": round(self.evaluation.overall_score or 0.0, 2),
                "passed": self.evaluation.accepted,
            }
        else:
            evaluation = {"overall_score": None, "passed": False}
            if self.judge_error:
                evaluation["error"] = self.judge_error
        out: dict[str, Any] = {
            "output_id": self.output_id,
            "content": self.content,
            "evaluation": evaluation,
        }
        if self.feedback:
            out["feedback"] = self.feedback
        return out


@dataclass
class LoopResult:
    """The outcome of :func:`gradeloop.run_loop`.

    ``draft`` was judged (unless the round cap was below 1) and ``passed`` is that
    draft's own ``accepted()``. ``rounds`` counts the evaluations attempted.
    ``unrounded_usage`` is the usage of calls in no round (a revision that raised,
    cut off at ``max_tokens`` for one); ``usage`` includes it.
    """

    draft: str
    passed: bool
    stop_reason: StopReason
    loop_id: str
    history: list[Iteration]
    output_id: str
    total_time_ms: float
    evaluation: Evaluation | None = None
    error: str | None = None
    selection: Any = None  # a loop._select.Selection when select="pairwise" compared
    unrounded_usage: Usage = field(default_factory=Usage)

    @property
    def rounds(self) -> int:
        return sum(1 for it in self.history if it.judged or it.judge_error)

    @property
    def usage(self) -> Usage:
        """Every token the loop spent, generator and judge, failed calls included (a
        pairwise selection too)."""
        spent = sum((it.usage for it in self.history), self.unrounded_usage)
        return spent + self.selection.usage if self.selection is not None else spent

    @property
    def improvement_trajectory(self) -> list[float]:
        return [
            round(it.evaluation.overall_score or 0.0, 2) for it in self.history if it.evaluation
        ]

    def to_json(self) -> dict[str, Any]:
        """The loop's history JSON (plus the stop reason and the verdict)."""
        return {
            "loop_id": self.loop_id,
            "iterations": [it.history_json() for it in self.history],
            "final_output_id": self.output_id,
            "total_time_ms": round(self.total_time_ms, 3),
            "improvement_trajectory": self.improvement_trajectory,
            "stop_reason": self.stop_reason,
            "passed": self.passed,
            **({"selection": self.selection.to_json()} if self.selection is not None else {}),
        }
