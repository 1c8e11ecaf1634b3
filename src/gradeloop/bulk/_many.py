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
from typing import TYPE_CHECKING, Any

from ..errors import JudgeError
from ..grading._agrade import check_and_ask, finish_async
from ..grading._calls import judge_calls
from ..grading._drivers import blocking
from ..grading._grade import Evaluation, GradePlan, Judge, failed_evaluation, start_plan
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._transcript import Draft
from ..grading._workers import worker_pool
from ..models._aclient import connection_pool
from ..models._pacing import THROTTLED, Pacer, pacing
from ._code_only import grade_code_only
from ._items import Batch, DraftLike, Item, as_item, reporter
from ._progress import ManyProgress, ProgressCallback, ResultCallback

if TYPE_CHECKING:  # the judge module imports the SDK; code-only runs never need it
    from ..models._judge import ReplyCache

__all__ = ["DraftLike", "Item", "agrade_many", "as_item", "grade_many"]


def grade_many(
    drafts: Iterable[Draft | DraftLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Judge | None = None,
    concurrency: int = 8,
    progress: bool | ProgressCallback = False,
    cache: ReplyCache | None = None,
    skip_judge: bool = False,
    registry: Registry | None = None,
    checker_timeout: float | None = None,
    on_result: ResultCallback | None = None,
) -> list[Evaluation]:
    """Grade every draft against ``rubric``; one :class:`~gradeloop.Evaluation` per
    draft, in input order.

    ``drafts`` are strings or agent transcripts (a :class:`~gradeloop.Transcript` or
    a list of message dicts; graded against ``task``, ids ``draft-1``, ``draft-2``,
    ...) or :class:`~gradeloop.migration.DraftItem` objects carrying their own id and task
    (and ``reference`` / ``metadata`` for checkers that take a context).
    At most ``concurrency`` drafts are graded at once; 429/529 answers slow the whole
    run down. ``progress=True`` shows a live bar on a terminal (a callable instead
    gets a :class:`ManyProgress` after each draft). ``cache`` gives the judge a
    verdict cache for this run (an :class:`~gradeloop.AnthropicJudge`, or any judge
    with a ``cache`` attribute).

    A draft whose judge fails gets a failed evaluation (``judge_error`` set; its
    judge keys not met) instead of raising.

    When no judge is asked (a rubric filled by code, or ``skip_judge=True``) no event
    loop runs: ``concurrency`` threads grade the drafts as :func:`~gradeloop.grade`
    does. Otherwise the drafts are graded on an event loop of this call's own, and
    the judge's async client is closed at the end; called inside a running event
    loop (asyncio code, Jupyter), that loop runs in a worker thread while the caller
    waits (the rule of every sync function that runs an event loop; ``await
    agrade_many(...)`` there keeps the caller's loop free). ``checker_timeout`` is
    :func:`~gradeloop.grade`'s. ``on_result`` is called with each draft's index in
    ``drafts`` and its evaluation as soon as the draft is graded (in the order they
    finish, one call at a time), so a caller can write each result out as it comes.
    """
    batch = _batch(drafts, rubric, task, judge, concurrency, cache, skip_judge, registry,
                   checker_timeout)  # fmt: skip
    if batch.code_only:
        return grade_code_only(batch, concurrency, progress, on_result)

    async def run() -> list[Evaluation]:
        try:
            return await _agrade_batch(batch, concurrency, progress, on_result)
        finally:
            closer = getattr(batch.judge, "aclose", None)
            if closer is not None:  # the async client this event loop used
                await closer()

    return blocking(run)


async def agrade_many(
    drafts: Iterable[Draft | DraftLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Judge | None = None,
    concurrency: int = 8,
    progress: bool | ProgressCallback = False,
    cache: ReplyCache | None = None,
    skip_judge: bool = False,
    registry: Registry | None = None,
    checker_timeout: float | None = None,
    on_result: ResultCallback | None = None,
) -> list[Evaluation]:
    """The async twin of :func:`grade_many`: same arguments, same result.

    A judge with only a sync ``evaluate`` and the code checkers run in a pool of
    worker threads this call owns (two per draft in flight), closed when it returns;
    the running loop's own executor is left alone. With no judge to ask, the drafts
    are graded in threads as :func:`grade_many` grades them, awaited.
    """
    batch = _batch(drafts, rubric, task, judge, concurrency, cache, skip_judge, registry,
                   checker_timeout)  # fmt: skip
    if batch.code_only:
        return await asyncio.to_thread(grade_code_only, batch, concurrency, progress, on_result)
    return await _agrade_batch(batch, concurrency, progress, on_result)


def _batch(
    drafts: Iterable[Draft | DraftLike],
    rubric: Rubric | Mapping[str, Any],
    task: str,
    judge: Judge | None,
    concurrency: int,
    cache: ReplyCache | None,
    skip_judge: bool,
    registry: Registry | None,
    checker_timeout: float | None,
) -> Batch:
    """The arguments of :func:`grade_many` (and :func:`agrade_many`), checked once."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, not {concurrency!r}")
    judge = _with_cache(judge, cache)
    return Batch.of(drafts, rubric, task, judge, skip_judge, registry, checker_timeout)


async def _agrade_batch(
    batch: Batch,
    concurrency: int,
    progress: bool | ProgressCallback,
    on_result: ResultCallback | None = None,
) -> list[Evaluation]:
    items = batch.items
    state = ManyProgress(total=len(items))
    results: list[Evaluation | None] = [None] * len(items)
    pacer = Pacer(concurrency)
    gate = _Gate(pacer)
    bar, report = reporter(progress, len(items))
    pending = iter(range(len(items)))

    async def worker() -> None:
        for index in pending:
            item = items[index]
            async with gate:
                evaluation = await _grade_one(item, batch, pacer)
            done = results[index] = evaluation.with_ids(item.output_id)
            if on_result is not None:
                on_result(index, done)
            state.add(evaluation)
            state.throttled, state.concurrency = pacer.throttled, pacer.limit
            if report is not None:
                report(state)

    # two threads a draft: its checkers, and a sync judge asked meanwhile
    with pacing(pacer), worker_pool(2 * concurrency), connection_pool(concurrency):
        if bar is not None:
            with bar:
                await _run_workers(worker, min(concurrency, len(items)))
        else:
            await _run_workers(worker, min(concurrency, len(items)))
    return [r for r in results if r is not None]


async def _run_workers(worker: Any, count: int) -> None:
    tasks = [asyncio.create_task(worker()) for _ in range(count)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _grade_one(item: Item, batch: Batch, pacer: Pacer) -> Evaluation:
    judge = batch.judge
    with judge_calls() as calls:
        plan = _start(item, batch)
        try:
            answer = await check_and_ask(plan, judge)
        except JudgeError as exc:
            _report_throttle(exc, pacer)
            return failed_evaluation(plan, f"{exc.reason}: {exc}", tuple(calls))
    return await finish_async(plan, answer, tuple(calls))


def _start(item: Item, batch: Batch) -> GradePlan:
    """Grading ``item`` begun: the judge keys to ask, no checker run yet."""
    return start_plan(
        item.draft,
        batch.rubric,
        task=item.task,
        judge=batch.judge,
        skip_judge=batch.skip_judge,
        registry=batch.registry,
        reference=item.reference,
        metadata=item.metadata,
        checker_timeout=batch.checker_timeout,
    )


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
