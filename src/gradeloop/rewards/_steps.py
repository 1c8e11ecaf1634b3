"""What one reward call did, counted per step: for the caller, TRL's logs and OpenTelemetry.

Every batch of rollouts rewarded is a :class:`RewardStep`: how many rollouts, how many
distinct ones were graded, how many rewards are None because the judge could not
answer, the mean of the others, the wall time, and the watch's figures when the step
was audited, with their confidence intervals. TRL gets them through its ``log_metric``
callback (averaged per logging step beside its own metrics); with a tracer provider set,
each step is a ``gradeloop.reward.step`` span carrying them as attributes, an interval
as ``<figure>.ci.lower`` / ``.ci.upper`` with ``gradeloop.reward.audit.ci.level`` (after
the GenAI conventions' ``gen_ai.evaluation.score.ci.*``, as :mod:`gradeloop.stats` does).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..integrations import telemetry
from ._watch import WatchStep

__all__ = ["RewardStep", "step_span"]


@dataclass(frozen=True)
class RewardStep:
    """One step's rewards: ``rollouts`` rewarded, ``unique`` graded (identical rollouts
    are graded once), ``unanswered`` (None rewards: the judge could not answer), ``mean``
    of the answered rewards, ``seconds`` of wall time, and ``audit`` (the watch's
    figures) when the step was audited."""

    step: int
    rollouts: int
    unique: int
    unanswered: int
    mean: float | None
    seconds: float
    audit: WatchStep | None = None

    def metrics(self) -> dict[str, float]:
        """The figures as TRL metrics (names under ``gradeloop/``); an interval's ends
        as ``<figure>_ci_low`` and ``<figure>_ci_high``."""
        out = {
            "gradeloop/unanswered": float(self.unanswered),
            "gradeloop/unique_fraction": self.unique / self.rollouts if self.rollouts else 0.0,
        }
        a = self.audit
        if a is not None:
            figures = [
                ("gradeloop/audit/train_reward", a.train_reward, None),
                ("gradeloop/audit/audit_reward", a.audit_reward, None),
                ("gradeloop/audit/gap", a.gap, a.gap_ci),
            ]
            figures += [
                (f"gradeloop/audit/agreement/{key}", rate, a.agreement_ci(key))
                for key, rate in a.agreement.items()
            ]
            for name, value, ci in figures:
                if value is not None:
                    out[name] = value
                if ci is not None:
                    out[f"{name}_ci_low"], out[f"{name}_ci_high"] = ci
        return out

    def attributes(self) -> dict[str, Any]:
        """The span attributes of the step (OpenTelemetry takes no None: those are left out)."""
        out: dict[str, Any] = {
            "gradeloop.reward.step": self.step,
            "gradeloop.reward.rollouts": self.rollouts,
            "gradeloop.reward.unique": self.unique,
            "gradeloop.reward.unanswered": self.unanswered,
            "gradeloop.reward.mean": self.mean,
        }
        a = self.audit
        if a is not None:
            out.update(
                {
                    "gradeloop.reward.audit.audited": a.audited,
                    "gradeloop.reward.audit.train_reward": a.train_reward,
                    "gradeloop.reward.audit.audit_reward": a.audit_reward,
                    "gradeloop.reward.audit.gap": a.gap,
                    "gradeloop.reward.audit.trend": a.trend,
                    "gradeloop.reward.audit.widening": a.widening,
                    "gradeloop.reward.audit.run_id": a.run_id,
                    "gradeloop.reward.audit.ci.level": a.level,
                }
            )
            out.update(_ci("gradeloop.reward.audit.gap", a.gap_ci))
            for key, rate in a.agreement.items():
                out[f"gradeloop.reward.audit.agreement.{key}"] = rate
                out.update(_ci(f"gradeloop.reward.audit.agreement.{key}", a.agreement_ci(key)))
        return {k: v for k, v in out.items() if v is not None}


def _ci(name: str, ci: list[float] | None) -> dict[str, float]:
    """An interval's ends as ``name.ci.lower`` / ``name.ci.upper`` (none without one)."""
    return {} if ci is None else {f"{name}.ci.lower": ci[0], f"{name}.ci.upper": ci[1]}


@contextlib.contextmanager
def step_span() -> Iterator[Any]:
    """A ``gradeloop.reward.step`` span around one step's grading (None when tracing
    is off); the grading's own spans nest in it."""
    tracer = telemetry.active_tracer()
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span("gradeloop.reward.step") as span:
        yield span
