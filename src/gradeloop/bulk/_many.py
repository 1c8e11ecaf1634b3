"""grade_many / agrade_many: many drafts, graded concurrently, results in input order.

A fixed pool of workers pulls drafts in order; each takes a slot from the batch's
:class:`~gradeloop.models._pacing.Pacer` before grading, so at most ``concurrency``
drafts are in flight, fewer after the API answers 429/529 (with the whole batch
paused for the server's ``retry-after``). One draft's judge failure is that draft's
failed evaluation (``judge_error`` set, its judge keys not met), never the batch's
exception.

A judge with ``aevaluate`` is awaited: an :class:`~gradeloop.AnthropicJudge` on a
client gradeloop built sends through an ``AsyncAnthropic`` twin whose HTTP client is
the SDK's own (aiohttp with the ``gradeloop[aiohttp]`` extra, else httpx), its pool
sized to the batch. A draft's code checkers, a sync judge, and a client the caller
built run in worker threads the batch owns (:mod:`gradeloop.grading._workers`), shut
down when it ends. Nothing process-wide changes while a batch runs.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import JudgeError, JudgeRequiredError
from ..grading._agrade import check_and_ask, finish_async
from ..grading._calls import judge_calls
from ..grading._grade import (
    CriterionResult,
    Evaluation,
    GradePlan,
    Judge,
    merge,
    start_plan,
)
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._verdict import Verdict
from ..grading._workers import worker_pool
from ..models._aclient import connection_pool
from ..models._pacing import THROTTLED, Pacer, pacing
from ._progress import ManyProgress, ProgressBar, ProgressCallback

if TYPE_CHECKING:  # the judge module imports the SDK; code-only runs never need it
    from ..models._judge import ReplyCache

__all__ = ["DraftLike", "Item", "agrade_many", "as_item", "failed_evaluation", "grade_many"]


class DraftLike(Protocol):
    """A draft with its own task and id (:class:`gradeloop.DraftItem` is one)."""

    @property
    def output_id(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def draft(self) -> str: ...


def grade_many(
    drafts: Iterable[str | DraftLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Judge | None = None,
    concurrency: int = 8,
    progress: bool | ProgressCallback = False,
    cache: ReplyCache | None = None,
    skip_judge: bool = False,
    registry: Registry | None = None,
) -> list[Evaluation]:
    """Grade every draft against ``rubric``; one :class:`~gradeloop.Evaluation` per
    draft, in input order.

    ``drafts`` are strings (graded against ``task``, ids ``draft-1``, ``draft-2``,
    ...) or :class:`~gradeloop.DraftItem` objects carrying their own id and task
    (and ``reference`` / ``metadata`` for checkers that take a context).
    At most ``concurrency`` drafts are graded at once; 429/529 answers slow the whole
    run down. ``progress=True`` shows a live bar on a terminal (a callable instead
    gets a :class:`ManyProgress` after each draft). ``cache`` gives the judge a
    verdict cache for this run (an :class:`~gradeloop.AnthropicJudge`, or any judge
    with a ``cache`` attribute).

    A draft whose judge fails gets a failed evaluation (``judge_error`` set; its
    judge keys not met) instead of raising. Called from inside a running event loop
    (asyncio code, Jupyter) it raises RuntimeError: ``await agrade_many(...)`` there.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "grade_many() cannot run inside a running event loop (asyncio code, Jupyter); "
            "use `await agrade_many(...)` there, with the same arguments"
        )
    _check_concurrency(concurrency)
    judge = _with_cache(judge, cache)

    async def run() -> list[Evaluation]:
        try:
            return await agrade_many(
                drafts,
                rubric,
                task=task,
                judge=judge,
                concurrency=concurrency,
                progress=progress,
                skip_judge=skip_judge,
                registry=registry,
            )
        finally:
            closer = getattr(judge, "aclose", None)
            if closer is not None:  # the async client this event loop used
                await closer()

    return asyncio.run(run())


async def agrade_many(
    drafts: Iterable[str | DraftLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Judge | None = None,
    concurrency: int = 8,
    progress: bool | ProgressCallback = False,
    cache: ReplyCache | None = None,
    skip_judge: bool = False,
    registry: Registry | None = None,
) -> list[Evaluation]:
    """The async twin of :func:`grade_many`: same arguments, same result.

    A judge with only a sync ``evaluate`` and the code checkers run in a pool of
    worker threads this call owns (two per draft in flight), closed when it returns;
    the running loop's own executor is left alone.
    """
    _check_concurrency(concurrency)
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    if rubric.judge_criteria and judge is None and not skip_judge:
        raise JudgeRequiredError([c.key for c in rubric.judge_criteria])
    judge = _with_cache(judge, cache)
    items = [as_item(d, i, task) for i, d in enumerate(drafts)]
    state = ManyProgress(total=len(items))
    results: list[Evaluation | None] = [None] * len(items)
    pacer = Pacer(concurrency)
    gate = _Gate(pacer)
    bar = ProgressBar(len(items)) if progress is True else None
    report = bar if bar is not None and bar.enabled else (progress if callable(progress) else None)
    pending = iter(range(len(items)))

    async def worker() -> None:
        for index in pending:
            item = items[index]
            async with gate:
                evaluation = await _grade_one(item, rubric, judge, pacer, skip_judge, registry)
            results[index] = evaluation.with_ids(item.output_id)
            state.add(evaluation)
            state.throttled, state.concurrency = pacer.throttled, pacer.limit
            if report is not None:
                report(state)

    # two threads a draft: its checkers, and a sync judge asked meanwhile
    with pacing(pacer), worker_pool(2 * concurrency), connection_pool(concurrency):
        if bar is not None and bar.enabled:
            with bar:
                await _run_workers(worker, min(concurrency, len(items)))
        else:
            await _run_workers(worker, min(concurrency, len(items)))
    return [r for r in results if r is not None]


def _check_concurrency(concurrency: object) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, not {concurrency!r}")


async def _run_workers(worker: Any, count: int) -> None:
    tasks = [asyncio.create_task(worker()) for _ in range(count)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _grade_one(
    item: Item,
    rubric: Rubric,
    judge: Judge | None,
    pacer: Pacer,
    skip_judge: bool,
    registry: Registry | None,
) -> Evaluation:
    with judge_calls() as calls:
        plan = _start(item, rubric, judge, skip_judge, registry)
        try:
            answer = await check_and_ask(plan, judge)
        except JudgeError as exc:
            _report_throttle(exc, pacer)
            return failed_evaluation(plan, f"{exc.reason}: {exc}", tuple(calls))
    return await finish_async(plan, answer, tuple(calls))


def _start(
    item: Item, rubric: Rubric, judge: Judge | None, skip_judge: bool, registry: Registry | None
) -> GradePlan:
    """Grading ``item`` begun: the judge keys to ask, no checker run yet."""
    return start_plan(
        item.draft,
        rubric,
        task=item.task,
        judge=judge,
        skip_judge=skip_judge,
        registry=registry,
        reference=item.reference,
        metadata=item.metadata,
    )


def failed_evaluation(plan: GradePlan, error: str, calls: tuple[Any, ...] = ()) -> Evaluation:
    """The evaluation of a draft whose judge failed: code keys as graded, judge keys
    not met (their issue names the failure), never accepted."""
    results: dict[str, CriterionResult] = dict(plan.results)
    for c in plan.rubric.judge_criteria:
        results[c.key] = CriterionResult(
            key=c.key,
            weight=c.weight,
            score=0.0,
            passed=False,
            source="judge",
            filled_by="judge",
            issues=("the judge gave no verdict",),
        )
    verdict = Verdict(
        reasoning=f"The judge failed: {error}",
        criteria_met={},
        passed=False,
        issues=[f"the judge failed: {error}"],
    )
    evaluation = merge(plan.rubric, results, verdict)
    return replace(evaluation, judge_error=error, judge_calls=calls, judge_called=True)


def _report_throttle(exc: JudgeError, pacer: Pacer) -> None:
    """A 429/529 that outlasted the client's retries slows the batch too (a client
    without gradeloop's pacing middleware is only seen this way)."""
    cause = exc.__cause__
    status = getattr(cause, "status_code", None)
    if status in THROTTLED:
        pacer.observe(status, getattr(getattr(cause, "response", None), "headers", None))


class _Gate:
    """Slots for drafts in flight: at most the pacer's current limit, none while paused."""

    def __init__(self, pacer: Pacer) -> None:
        self.pacer = pacer
        self.in_flight = 0
        self._freed = asyncio.Event()

    async def __aenter__(self) -> None:
        while True:
            await self.pacer.wait()
            if self.in_flight < self.pacer.limit:
                self.in_flight += 1
                return
            self._freed.clear()
            await self._freed.wait()

    async def __aexit__(self, *exc: object) -> None:
        self.in_flight -= 1
        self._freed.set()


@dataclass(frozen=True)
class Item:
    """A draft to grade, with its id, task and (optional) context."""

    output_id: str
    task: str
    draft: str
    reference: str | None = None
    metadata: Mapping[str, Any] | None = None


def as_item(draft: str | DraftLike, index: int, task: str) -> Item:
    """A string (id ``draft-N``, the shared ``task``) or a DraftItem, as an :class:`Item`."""
    if isinstance(draft, str):
        return Item(f"draft-{index + 1}", task, draft)
    text = getattr(draft, "draft", None)
    if not isinstance(text, str):
        raise TypeError(
            f"drafts[{index}] is {type(draft).__name__}: give a string or a DraftItem "
            "(with .draft, .task and .output_id)"
        )
    own_task = getattr(draft, "task", None)
    output_id = getattr(draft, "output_id", None) or f"draft-{index + 1}"
    return Item(
        str(output_id),
        own_task if isinstance(own_task, str) else task,
        text,
        getattr(draft, "reference", None),
        getattr(draft, "metadata", None),
    )


def _with_cache(judge: Judge | None, cache: ReplyCache | None) -> Judge | None:
    if cache is None or judge is None:
        return judge
    if getattr(judge, "cache", None) is cache:
        return judge
    if not hasattr(judge, "cache"):
        raise TypeError(
            f"cache= needs a judge that takes a verdict cache (AnthropicJudge); "
            f"{type(judge).__name__} has no 'cache' attribute"
        )
    own = copy.copy(judge)  # the caller's judge keeps its own setting
    own.cache = cache
    return own
