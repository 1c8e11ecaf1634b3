"""The engine behind every reward function: grade, audit, count, record.

One :class:`Rewarder` serves a reward function and the per-key functions made from
it: they share its grading of a batch (TRL calls each function with the same
``prompts`` and ``completions`` lists; the first call grades, the others read the same
evaluations), its step records and its watch.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..errors import JudgeRequiredError
from ..grading import Evaluation, Rubric
from ..history import HistoryStore
from ._rollouts import Rollout
from ._scorer import RewardScorer, run_closing, with_cache
from ._shapes import RewardShape, key_reward, resolve_shape
from ._steps import RewardStep, step_span
from ._watch import RewardWatch, WatchStep

__all__ = ["STREAM_STEP", "Graded", "Rewarder", "step_of"]


@dataclass(frozen=True)
class Graded:
    """A batch graded: its rollouts' evaluations, and the step it was counted as."""

    evaluations: list[Evaluation]
    step: RewardStep


class Rewarder:
    """Grades rollouts for rewards, audits a sample when asked, and counts each step."""

    def __init__(
        self,
        rubric: Rubric,
        *,
        judge: Any,
        shape: str | None,
        signed: bool | None,
        audit: Any,
        audit_fraction: float,
        seed: int,
        concurrency: int,
        cache: Any,
        store: HistoryStore | None,
        name: str | None,
    ) -> None:
        if not isinstance(rubric, Rubric):
            raise TypeError(
                "rubric must be a gradeloop Rubric (Rubric.load(path)), "
                f"not {type(rubric).__name__}"
            )
        if rubric.judge_criteria and judge is None:  # now, not at the first training step
            raise JudgeRequiredError([c.key for c in rubric.judge_criteria])
        self.rubric = rubric
        self.shape: RewardShape = resolve_shape(rubric, shape, signed)
        self.scorer = RewardScorer(rubric, with_cache(judge, cache), concurrency)
        self.watch: RewardWatch | None = None
        self.auditor: RewardScorer | None = None
        _check_audit(rubric, audit, audit_fraction)
        if audit is not None:
            self.watch = RewardWatch(
                audit,
                rubric=rubric,
                shape=self.shape,
                train_judge=judge,
                fraction=audit_fraction,
                seed=seed,
                store=store,
                name=name,
            )
            self.auditor = RewardScorer(rubric, audit, concurrency)
        self.steps: list[RewardStep] = []
        self._lock = threading.Lock()
        self._last: tuple[Any, Any, int, Graded] | None = None
        self._running: tuple[Any, Any, int, asyncio.Future[Graded]] | None = None
        self._stream_audits: list[tuple[Rollout, Evaluation, Evaluation]] = []
        self._streamed = 0

    async def aclose(self) -> None:
        """Close the judges' async clients built for the running event loop (a batch
        from sync code closes its own; the async forms leave them open for the next)."""
        judges = [self.scorer.judge, self.watch.audit if self.watch is not None else None]
        for judge in judges:
            closer = getattr(judge, "aclose", None)
            if closer is not None:
                await closer()

    # -- rewards ----------------------------------------------------------------------

    def rewards(self, graded: Graded, key: str | None) -> list[float | None]:
        """Each rollout's reward (``key``: that key's), in order."""
        if key is None:
            return [self.shape.of(e) for e in graded.evaluations]
        return [key_reward(e, key, self.shape) for e in graded.evaluations]

    # -- a batch (TRL) ----------------------------------------------------------------

    def graded(self, prompts: Any, completions: Any, step: int | None, read: Any) -> Graded:
        """The batch graded (once for all the functions that share this rewarder)."""
        with self._lock:
            last = self._last
            if last is not None and _same(last, prompts, completions, step):
                return last[3]
            rollouts: list[Rollout] = read()
            number = self._number(step)
            audited = self.watch.sample(len(rollouts)) if self.watch is not None else []
            started = time.perf_counter()
            with step_span() as span:
                if audited:
                    judges = [self.scorer.judge, self.watch.audit if self.watch else None]
                    train, audit = run_closing(
                        lambda: self._both(rollouts, audited),
                        [j for j in judges if j is not None],
                    )
                else:
                    train, audit = self.scorer.batch(rollouts), []
                graded = self._count(number, rollouts, train, audited, audit, started, span)
            self._last = (prompts, completions, number, graded)
            return graded

    async def agraded(self, prompts: Any, completions: Any, step: int | None, read: Any) -> Graded:
        """:meth:`graded`, awaited: concurrent calls for the same batch share one grading."""
        running = self._running
        if running is not None and _same(running, prompts, completions, step):
            return await asyncio.shield(running[3])
        number = self._number(step)
        task = asyncio.ensure_future(self._agrade(read, number))
        self._running = (prompts, completions, number, task)
        return await asyncio.shield(task)

    async def _agrade(self, read: Any, number: int) -> Graded:
        rollouts: list[Rollout] = read()
        audited = self.watch.sample(len(rollouts)) if self.watch is not None else []
        started = time.perf_counter()
        with step_span() as span:
            if audited:
                train, audit = await self._both(rollouts, audited)
            else:
                train, audit = await self.scorer.abatch(rollouts), []
            return self._count(number, rollouts, train, audited, audit, started, span)

    async def _both(
        self, rollouts: list[Rollout], audited: list[int]
    ) -> tuple[list[Evaluation], list[Evaluation]]:
        """The training grades of every rollout and the audit grades of the sample, at once."""
        assert self.auditor is not None
        sample = [rollouts[i] for i in audited]
        train, audit = await asyncio.gather(
            self.scorer.abatch(rollouts), self.auditor.abatch(sample)
        )
        return train, audit

    def _number(self, step: int | None) -> int:
        if step is not None:
            return step
        return self.steps[-1].step + 1 if self.steps else 0

    def _count(
        self,
        number: int,
        rollouts: list[Rollout],
        train: list[Evaluation],
        audited: list[int],
        audit: list[Evaluation],
        started: float,
        span: Any,
    ) -> Graded:
        """The step's figures (the watch's too), kept and put on the span."""
        watched: WatchStep | None = None
        if self.watch is not None and audited:
            sample = [rollouts[i] for i in audited]
            watched = self.watch.record(
                number, len(rollouts), sample, [train[i] for i in audited], audit
            )
        values = [self.shape.of(e) for e in train]
        answered = [v for v in values if v is not None]
        step = RewardStep(
            step=number,
            rollouts=len(rollouts),
            unique=len({id(e) for e in train}),  # identical rollouts share one grade
            unanswered=len(values) - len(answered),
            mean=sum(answered) / len(answered) if answered else None,
            seconds=time.perf_counter() - started,
            audit=watched,
        )
        if span is not None:
            for name, value in step.attributes().items():
                span.set_attribute(name, value)
        self.steps.append(step)
        return Graded(train, step)

    # -- one rollout at a time (verl) -------------------------------------------------

    async def aone(self, rollout: Rollout) -> Evaluation:
        """One rollout graded as it finishes (and audited when the watch draws it)."""
        if self.auditor is None or not self._draw():
            return await self.scorer.aone(rollout)
        return await self._audited_pair(rollout)

    def one(self, rollout: Rollout) -> Evaluation:
        """:meth:`aone`, blocking (on the judge's sync client unless this one is audited)."""
        if self.auditor is None or not self._draw():
            return self.scorer.one(rollout)
        judges = [j for j in (self.scorer.judge, self.auditor.judge) if j is not None]
        return run_closing(lambda: self._audited_pair(rollout), judges)

    async def _audited_pair(self, rollout: Rollout) -> Evaluation:
        assert self.auditor is not None
        train, audit = await asyncio.gather(self.scorer.aone(rollout), self.auditor.aone(rollout))
        self._audited(rollout, train, audit)
        return train

    def _draw(self) -> bool:
        """Whether the next streamed rollout is audited (seeded, ``fraction`` of them)."""
        if self.watch is None:
            return False
        with self._lock:
            n, self._streamed = self._streamed, self._streamed + 1
        return random.Random(f"{self.watch.seed}:stream:{n}").random() < self.watch.fraction

    def _audited(self, rollout: Rollout, train: Evaluation, audit: Evaluation) -> None:
        """Streamed audits are counted in steps of ``STREAM_STEP`` audited rollouts."""
        assert self.watch is not None
        with self._lock:
            self._stream_audits.append((rollout, train, audit))
            if len(self._stream_audits) < STREAM_STEP:
                return
            batch, self._stream_audits = self._stream_audits, []
            number = len(self.watch.steps)
            total = self._streamed
        self.watch.record(
            number, total, [b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]
        )

    def flush(self) -> WatchStep | None:
        """Record the streamed audits not yet counted in a step (call it at the end of
        a run, or at each step's end, when rewards are streamed)."""
        with self._lock:
            batch, self._stream_audits = self._stream_audits, []
            total = self._streamed
        if not batch or self.watch is None:
            return None
        number = len(self.watch.steps)
        return self.watch.record(
            number, total, [b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]
        )


#: Streamed rollouts (verl) are audited one by one; every this many audited ones are a step.
STREAM_STEP = 32


def _check_audit(rubric: Rubric, audit: Any, fraction: float) -> None:
    if audit is None and fraction:
        raise ValueError("audit_fraction needs an audit judge: audit=AnthropicJudge(...)")
    if audit is not None and not rubric.judge_keys:
        raise ValueError(
            "audit= compares judges on the rubric's judge keys, and this rubric has none "
            "(code keys cannot be flattered); leave audit out"
        )


def _same(
    memo: tuple[Any, Any, int, Any], prompts: Any, completions: Any, step: int | None
) -> bool:
    """Whether a remembered batch is this one: TRL hands every reward function of a step
    the very same lists (the memo holds them, so their ids cannot be reused)."""
    return memo[0] is prompts and memo[1] is completions and (step is None or memo[2] == step)


def step_of(trainer_state: Any) -> int | None:
    """TRL's ``trainer_state.global_step``, when it has one."""
    step = getattr(trainer_state, "global_step", None)
    return step if isinstance(step, int) and not isinstance(step, bool) else None
