"""Grading rollouts for rewards: whole batches, and each rollout as it finishes.

A batch is graded on :func:`~gradeloop.grade_many`'s road (``agrade_many`` when a judge
is asked): identical rollouts (same task, completion, reference and metadata) are
graded once, at most ``concurrency`` judge requests are in flight, 429/529 answers slow
the whole batch, and the judge's verdict cache (``cache=``) answers what an earlier
step already asked. A rubric filled by code alone runs no event loop at all.

A single rollout (:meth:`RewardScorer.aone`, the streaming entry point verl's reward
loop calls once per rollout) is graded on the same road as one draft of a batch (the
plan, the checkers while the judge is asked, the merge; a judge failure is the draft's
failed evaluation), under the same cap: a per-event-loop limit of ``concurrency``
gradings in flight, the pacer's pause on 429/529, and an identical rollout already
being graded awaited instead of asked again.
"""

from __future__ import annotations

import asyncio
import copy
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from ..bulk import agrade_many, grade_many
from ..errors import JudgeError
from ..grading import Evaluation, Rubric, grade
from ..grading._agrade import check_and_ask, finish_async
from ..grading._calls import judge_calls
from ..grading._drivers import blocking
from ..grading._grade import failed_evaluation, run_checks, start_plan
from ..grading._shadow import judge_request
from ..migration import DraftItem
from ..models._aclient import connection_pool
from ..models._pacing import Pacer, pacing
from ._rollouts import Rollout, dedup_key

__all__ = ["RewardScorer", "with_cache"]

T = TypeVar("T")


def with_cache(judge: Any, cache: Any) -> Any:
    """``judge`` with the verdict cache ``cache`` (a copy: the caller's judge keeps its
    own setting); ``judge`` itself without one."""
    if cache is None or judge is None or getattr(judge, "cache", None) is cache:
        return judge
    if not hasattr(judge, "cache"):
        raise TypeError(
            f"cache= needs a judge that takes a verdict cache (AnthropicJudge, "
            f"OpenAICompatibleJudge); {type(judge).__name__} has no 'cache' attribute"
        )
    own = copy.copy(judge)
    own.cache = cache
    return own


class RewardScorer:
    """Grades rollouts against one rubric with one judge (or none)."""

    def __init__(self, rubric: Rubric, judge: Any, concurrency: int) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an integer >= 1, not {concurrency!r}")
        self.rubric = rubric
        self.judge = judge
        self.concurrency = concurrency
        self.asks_judge = judge is not None and bool(judge_request(rubric))
        self._pacer = Pacer(concurrency)
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    # -- batches ----------------------------------------------------------------------

    def batch(self, rollouts: Sequence[Rollout]) -> list[Evaluation]:
        """Every rollout's evaluation, in order (blocking)."""
        items, positions = unique_items(rollouts)
        if not self.asks_judge:  # code alone: grade()'s road in threads, no event loop
            graded = grade_many(items, self.rubric, judge=self.judge, concurrency=self.concurrency)
        else:
            graded = run_closing(lambda: self._agrade_items(items), [self.judge])
        return [graded[j] for j in positions]

    async def abatch(self, rollouts: Sequence[Rollout]) -> list[Evaluation]:
        """Every rollout's evaluation, in order, awaited on the running event loop."""
        items, positions = unique_items(rollouts)
        graded = await self._agrade_items(items)
        return [graded[j] for j in positions]

    async def _agrade_items(self, items: list[DraftItem]) -> list[Evaluation]:
        if not items:
            return []
        return await agrade_many(items, self.rubric, judge=self.judge, concurrency=self.concurrency)

    # -- one rollout at a time --------------------------------------------------------

    async def aone(self, rollout: Rollout) -> Evaluation:
        """One rollout's evaluation as soon as it is graded (the judge's failure is the
        evaluation's ``judge_error``, as in a batch, never an exception)."""
        state = self._state()
        key = dedup_key(rollout)
        running = state.running.get(key)
        if running is not None:  # the same rollout is being graded: share its answer
            return await asyncio.shield(running)
        task = asyncio.ensure_future(self._graded(rollout, state))
        state.running[key] = task
        try:
            return await asyncio.shield(task)
        finally:
            if task.done():
                state.running.pop(key, None)

    def one(self, rollout: Rollout) -> Evaluation:
        """One rollout's evaluation, blocking: :func:`~gradeloop.grade` on the judge's
        sync client (its connections kept between calls), in the caller's thread; a
        judge failure is the rollout's failed evaluation, as in a batch."""
        with pacing(self._pacer), judge_calls() as calls:
            try:
                return grade(
                    rollout.draft,
                    self.rubric,
                    task=rollout.task,
                    judge=self.judge,
                    reference=rollout.reference,
                    metadata=rollout.metadata,
                )
            except JudgeError as exc:
                failure = f"{exc.reason}: {exc}"
        plan = run_checks(self._plan(rollout))  # the code keys still count
        return failed_evaluation(plan, failure, tuple(calls))

    def _plan(self, rollout: Rollout) -> Any:
        return start_plan(
            rollout.draft,
            self.rubric,
            task=rollout.task,
            judge=self.judge,
            skip_judge=False,
            registry=None,
            reference=rollout.reference,
            metadata=rollout.metadata,
        )

    async def _graded(self, rollout: Rollout, state: _LoopState) -> Evaluation:
        async with state.slots:
            await self._pacer.wait()
            # the judge's async client for this loop holds a connection per grading in flight
            with pacing(self._pacer), connection_pool(self.concurrency), judge_calls() as calls:
                plan = self._plan(rollout)
                try:
                    answer = await check_and_ask(plan, self.judge)
                except JudgeError as exc:  # as in a batch: the failure is this rollout's
                    return failed_evaluation(plan, f"{exc.reason}: {exc}", tuple(calls))
            return await finish_async(plan, answer, tuple(calls))

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._slots.get(loop)
        if state is None:
            state = self._slots[loop] = _LoopState(self.concurrency)
        return state


class _LoopState:
    """One event loop's limit on gradings in flight and the rollouts being graded."""

    def __init__(self, concurrency: int) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.running: dict[tuple[Any, ...], asyncio.Future[Evaluation]] = {}


def unique_items(rollouts: Sequence[Rollout]) -> tuple[list[DraftItem], list[int]]:
    """The distinct rollouts as drafts to grade, and for each rollout its draft's index."""
    index: dict[tuple[Any, ...], int] = {}
    items: list[DraftItem] = []
    positions: list[int] = []
    for r in rollouts:
        key = dedup_key(r)
        j = index.get(key)
        if j is None:
            j = index[key] = len(items)
            items.append(
                DraftItem(
                    f"rollout-{j + 1}", r.task, r.draft, "", r.reference, dict(r.metadata or {})
                )
            )
        positions.append(j)
    return items, positions


def run_closing(main: Callable[[], Awaitable[T]], judges: Sequence[Any]) -> T:
    """``main()`` on an event loop of this call's own (:func:`blocking`'s rule), the
    judges' async clients for that loop closed at the end, as ``grade_many`` closes its."""

    async def run() -> T:
        try:
            return await main()
        finally:
            for judge in judges:
                closer = getattr(judge, "aclose", None)
                if closer is not None:
                    await closer()

    return blocking(run)
