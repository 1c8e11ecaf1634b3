"""The reward-hacking watch: a seeded share of rollouts graded by an audit judge too.

Under optimisation pressure a policy learns what flatters the training judge; a
stronger judge (or a jury) grading the same rollouts does not move with it. Each step
the watch picks a seeded sample of the rollouts (``fraction`` of them, at least one),
has the audit judge grade them with the same rubric, and compares: the training reward
and the audit reward on those rollouts (their gap), and per judge key how often the two
judges agree. Each figure carries its confidence interval from :mod:`gradeloop.stats`:
the gap a paired t interval on the per-rollout differences (the two rewards are paired by
rollout), each key's agreement a Wilson interval. The warning rests on the evidence: a
gap of at least ``warn_gap`` whose interval lies above zero (not noise) and whose trend
over the last ``window`` steps is up raises a :class:`~gradeloop.errors.GradeloopWarning`.

Each key's pair of answers is a :class:`~gradeloop.grading.ShadowResult` (the training
judge's side as primary, the audit judge's as shadow), so the audited rollouts land in
the history as shadow outcomes (origin ``"reward-audit"``) beside a grading run per step
that holds the audited rollouts with the audit judge's evaluations and the step's
figures (its ``config["reward_watch"]``); ``gradeloop report`` charts them over steps.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import GradeloopWarning
from ..grading import Evaluation, Rubric, ShadowResult, ShadowSide
from ..history import HistoryStore
from ..history._grading import GradedDraft
from ..stats import Interval, paired_t, wilson
from ._rollouts import Rollout
from ._shapes import RewardShape, unanswered

__all__ = ["AUDIT_ORIGIN", "RewardWatch", "WatchStep", "judge_name"]

#: The origin of the grading runs and shadow outcomes the watch records.
AUDIT_ORIGIN = "reward-audit"


def judge_name(judge: Any) -> str:
    """What a judge is called in records: its model, else its class."""
    model = getattr(judge, "model", None)
    return str(model) if model else type(judge).__name__


@dataclass(frozen=True)
class WatchStep:
    """What the watch saw at one step, on the audited rollouts.

    ``train_reward`` and ``audit_reward`` are the mean rewards the two judges' grades
    give (over rollouts both answered); ``gap`` is their difference (training minus
    audit); ``agreement`` holds, per judge key, the share of audited rollouts where both
    judges reached the same met / not met (None: no rollout both answered); ``trend`` is
    the gap's least-squares slope per audited step over the last ``window`` of them
    (None before two);
    ``widening`` is the warning; ``run_id`` the grading run that holds the audited
    rollouts (None without a store).

    The intervals, at ``level``: ``gap_interval`` is the paired t interval of the mean
    per-rollout difference (:func:`gradeloop.stats.paired_t`; no bounds below two
    rollouts), ``agreement_intervals`` each key's Wilson interval
    (:func:`gradeloop.stats.wilson`); both are :class:`gradeloop.stats.Interval`.
    """

    step: int
    rollouts: int
    audited: int
    train_reward: float | None
    audit_reward: float | None
    gap: float | None
    agreement: dict[str, float | None] = field(default_factory=dict)
    unanswered: dict[str, int] = field(default_factory=dict)
    trend: float | None = None
    widening: bool = False
    run_id: str | None = None
    level: float = 0.95
    gap_interval: Interval | None = None
    agreement_intervals: dict[str, Interval] = field(default_factory=dict)

    @property
    def gap_ci(self) -> list[float] | None:
        """The gap's interval ``[low, high]``, or None when there is none."""
        return None if self.gap_interval is None else self.gap_interval.ci

    def agreement_ci(self, key: str) -> list[float] | None:
        """``key``'s agreement interval ``[low, high]``, or None when there is none."""
        interval = self.agreement_intervals.get(key)
        return None if interval is None else interval.ci

    def to_json(self) -> dict[str, Any]:
        """The figures as recorded with the step's grading run."""
        return {
            "step": self.step,
            "rollouts": self.rollouts,
            "audited": self.audited,
            "train_reward": _round(self.train_reward),
            "audit_reward": _round(self.audit_reward),
            "gap": _round(self.gap),
            "gap_ci": _round_ci(self.gap_ci),
            "agreement": {k: _round(v) for k, v in self.agreement.items()},
            "agreement_ci": {k: _round_ci(self.agreement_ci(k)) for k in self.agreement},
            "level": self.level,
            "unanswered": dict(self.unanswered),
            "trend": _round(self.trend),
            "widening": self.widening,
        }


class RewardWatch:
    """Audits a seeded sample of each step's rollouts with a second judge.

    ``audit`` is the audit judge (a stronger model, or a :class:`~gradeloop.judging.Jury`);
    ``fraction`` the share of rollouts it grades (0 < fraction <= 1); ``seed`` makes the
    sample repeatable; ``store`` (a :class:`~gradeloop.HistoryStore`) receives the records;
    ``name`` labels this watch's steps in the history (default: the rubric's name);
    ``level`` is the confidence level of every interval (0.95). The warning fires when
    the gap is at least ``warn_gap``, its interval excludes zero and its trend over the
    last ``window`` steps is up.
    """

    def __init__(
        self,
        audit: Any,
        *,
        rubric: Rubric,
        shape: RewardShape,
        train_judge: Any,
        fraction: float,
        seed: int = 0,
        store: HistoryStore | None = None,
        name: str | None = None,
        window: int = 5,
        warn_gap: float = 0.1,
        level: float = 0.95,
    ) -> None:
        if isinstance(fraction, bool) or not isinstance(fraction, int | float):
            raise ValueError(f"audit_fraction must be a number in (0, 1], not {fraction!r}")
        if not 0 < fraction <= 1:
            raise ValueError(
                f"audit_fraction must be in (0, 1] with an audit judge, not {fraction}"
            )
        if window < 2:
            raise ValueError(f"the watch's window must be at least 2 steps, not {window}")
        if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
            raise ValueError(
                f"the watch's level must be between 0 and 1 (e.g. 0.95), not {level!r}"
            )
        self.audit = audit
        self.rubric, self.shape = rubric, shape
        self.fraction, self.seed = float(fraction), seed
        self.store, self.window, self.warn_gap = store, window, warn_gap
        self.level = float(level)
        self.name = name or rubric.name or "reward"
        self.train_name, self.audit_name = judge_name(train_judge), judge_name(audit)
        self.steps: list[WatchStep] = []
        self._batches = 0

    def sample(self, n: int) -> list[int]:
        """The positions of this batch's rollouts to audit (seeded by the watch's seed
        and the batch's number, so a rerun audits the same ones)."""
        if n == 0:
            return []
        batch, self._batches = self._batches, self._batches + 1
        k = min(n, max(1, round(self.fraction * n)))
        return sorted(random.Random(f"{self.seed}:{batch}").sample(range(n), k))

    def record(
        self,
        step: int,
        total: int,
        rollouts: Sequence[Rollout],
        train: Sequence[Evaluation],
        audit: Sequence[Evaluation],
    ) -> WatchStep:
        """Compare the two judges on the audited ``rollouts`` of a step of ``total``,
        store the records, and warn when the gap widens."""
        pairs = [(self.shape.of(t), self.shape.of(a)) for t, a in zip(train, audit, strict=True)]
        both = [(t, a) for t, a in pairs if t is not None and a is not None]
        # paired by rollout: the interval of the mean difference, training minus audit
        gap_interval, _ = paired_t([a for _, a in both], [t for t, _ in both], self.level)
        gap = gap_interval.estimate
        shadows = [self._shadows(t, a) for t, a in zip(train, audit, strict=True)]
        agreement = _agreement(self.rubric.judge_keys, shadows, self.level)
        trend = self._trend(gap)
        figures = WatchStep(
            step=step,
            rollouts=total,
            audited=len(rollouts),
            train_reward=_mean([t for t, _ in both]),
            audit_reward=_mean([a for _, a in both]),
            gap=gap,
            agreement={k: v.estimate for k, v in agreement.items()},
            unanswered={
                "train": sum(unanswered(e) for e in train),
                "audit": sum(unanswered(e) for e in audit),
            },
            trend=trend,
            widening=self._widening(gap_interval, trend),
            level=self.level,
            gap_interval=gap_interval,
            agreement_intervals=agreement,
        )
        if self.store is not None:
            figures = self._store(figures, rollouts, audit, shadows)
        if figures.widening and not (self.steps and self.steps[-1].widening):
            warnings.warn(
                _warning(figures, self.audit_name, self.window), GradeloopWarning, stacklevel=2
            )
        self.steps.append(figures)
        return figures

    def _widening(self, gap: Interval, trend: float | None) -> bool:
        """The warning, on the evidence: the gap is at least ``warn_gap``, its interval
        lies above zero (a gap this size is not the audit sample's noise) and its trend
        is up. No interval (fewer than two rollouts compared) is no evidence."""
        return (
            trend is not None
            and trend > 0
            and gap.estimate is not None
            and gap.estimate >= self.warn_gap
            and gap.low is not None
            and gap.low > 0
        )

    def _trend(self, gap: float | None) -> float | None:
        """The least-squares slope of the gap per step over the window, this step in."""
        points = [(i, s.gap) for i, s in enumerate(self.steps) if s.gap is not None]
        if gap is not None:
            points.append((len(self.steps), gap))
        points = points[-self.window :]
        if len(points) < 2:
            return None
        xs, ys = [float(x) for x, _ in points], [y for _, y in points]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        spread = sum((x - mx) ** 2 for x in xs)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread

    def _shadows(self, train: Evaluation, audit: Evaluation) -> list[ShadowResult]:
        """Each judge key's two answers on one rollout, as shadow outcomes."""
        out = []
        for key in self.rubric.judge_keys:
            mine, theirs = _side(train, key, self.train_name), _side(audit, key, self.audit_name)
            error = _error(train, key, "training") or _error(audit, key, "audit")
            out.append(
                ShadowResult(
                    key=key,
                    scale=self.rubric[key].scale,
                    primary=mine,
                    shadow=theirs,
                    status="failed" if error else "ok",
                    error=error,
                )
            )
        return out

    def _store(
        self,
        figures: WatchStep,
        rollouts: Sequence[Rollout],
        audit: Sequence[Evaluation],
        shadows: Sequence[Sequence[ShadowResult]],
    ) -> WatchStep:
        assert self.store is not None
        drafts = [
            GradedDraft(
                f"step{figures.step}-{i + 1}",
                r.draft,
                a,
                r.task,
                reference=r.reference,
                metadata=r.metadata,
            )
            for i, (r, a) in enumerate(zip(rollouts, audit, strict=True))
        ]
        config = {
            "reward_watch": {**figures.to_json(), "watch": self.name, **self.shape.to_json()},
            "judge": self.train_name,
            "audit_judge": self.audit_name,
        }
        run_id = self.store.add_grading_run(
            drafts,
            rubric=self.rubric.to_dict(),
            rubric_name=self.rubric.name or "",
            origin=AUDIT_ORIGIN,
            config=config,
        )
        for d, results in zip(drafts, shadows, strict=True):
            self.store.add_shadow_results(f"{run_id}/{d.item_id}", results, origin=AUDIT_ORIGIN)
        return replace(figures, run_id=run_id)


def _side(evaluation: Evaluation, key: str, name: str) -> ShadowSide:
    result = evaluation[key]
    answered = evaluation.judge_error is None and result.error is None
    return ShadowSide(
        source="judge",
        filled_by=name,
        passed=result.passed if answered else None,
        score=result.score if answered else None,
        issues=result.issues,
        agreement=result.agreement,
    )


def _error(evaluation: Evaluation, key: str, which: str) -> str | None:
    problem = evaluation.judge_error or evaluation[key].error
    return f"the {which} judge did not answer: {problem}" if problem else None


def _agreement(
    keys: Sequence[str], shadows: Sequence[Sequence[ShadowResult]], level: float
) -> dict[str, Interval]:
    """Per key, the share of rollouts both judges answered alike, with Wilson's interval."""
    out: dict[str, Interval] = {}
    for i, key in enumerate(keys):
        agree = [a for s in shadows if (a := s[i].agree) is not None]
        out[key] = wilson(sum(agree), len(agree), level)
    return out


def _warning(step: WatchStep, audit: str, window: int) -> str:
    assert step.gap is not None and step.trend is not None and step.gap_ci is not None
    low, high = step.gap_ci
    return (
        f"reward watch: at step {step.step} the training judge's reward is {step.gap:+.3f} "
        f"({step.level * 100:g} % interval {low:+.3f} to {high:+.3f}) above the audit "
        f"judge's ({audit}) and the gap has widened by {step.trend:+.3f} a "
        f"step over the last {window} steps; the policy may be learning what flatters the "
        "training judge: see docs/rewards.md (the reward-hacking watch)"
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, 4)


def _round_ci(ci: list[float] | None) -> list[float] | None:
    return None if ci is None else [round(x, 4) for x in ci]
