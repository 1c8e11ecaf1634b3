"""grade_many / agrade_many: many drafts, graded concurrently, results in input order.

A fixed pool of workers pulls drafts in order; each takes a slot from the batch's
:class:`~gradeloop.models._pacing.Pacer` before grading, so at most ``concurrency``
drafts are in flight, fewer after the API answers 429/529 (with the whole batch
paused for the server's ``retry-after``). One draft's judge failure is that draft's
failed evaluation (``judge_error`` set, its judge keys not met), never the batch's
exception. Code checkers run in worker threads, off the event loop.

An SDK-backed judge (:class:`~gradeloop.AnthropicJudge`) is awaited on its async
twin, whose httpx client sends over gradeloop's lean asyncio transport
(:mod:`gradeloop.models._atransport`), while the draft's checkers run in a worker
thread: the request does not wait for them. When that transport is not allowed (a
proxy is configured, or ``GRADELOOP_HTTPX_TRANSPORT=1``), :func:`grade_many` asks such
a judge through its sync client in worker threads instead, when that client carries
the pacing middleware (every client gradeloop builds does): the same request,
reading and failure typing as ``aevaluate``, and less CPU a request than httpx's own
async stack (benchmarks/README.md). Such a draft is graded whole (checkers, request,
merge) in one worker thread, as :func:`~gradeloop.grade` grades it.
:func:`agrade_many` always awaits ``aevaluate``. While a batch runs, the objects
that existed before it are frozen out of the garbage collector's full passes and
the interpreter's switch interval is 2 ms (:mod:`._process`).
"""

from __future__ import annotations

import asyncio
import copy
import sys
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
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
    _ask_judge,
    finish_grade,
    merge,
    run_checks,
    start_plan,
)
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._transcript import Draft, Transcript, as_transcript
from ..grading._verdict import Verdict
from ..models._pacing import THROTTLED, Pacer, pace, pacing
from ._process import prompt_loop, quiet_heap
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
    def draft(self) -> str | Transcript: ...


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
) -> list[Evaluation]:
    """Grade every draft against ``rubric``; one :class:`~gradeloop.Evaluation` per
    draft, in input order.

    ``drafts`` are strings or agent transcripts (a :class:`~gradeloop.Transcript` or
    a list of message dicts; graded against ``task``, ids ``draft-1``, ``draft-2``,
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
        # Sync judges (an SDK judge's sync client too) and the code checkers run in
        # worker threads: give this run as many as drafts in flight (asyncio's default
        # pool has cpu_count + 4).
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="gradeloop")
        )
        _SDK_IN_THREADS.set(True)  # this task's context: the workers it starts see it
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
) -> list[Evaluation]:
    """The async twin of :func:`grade_many`: same arguments, same result.

    A judge with only a sync ``evaluate`` and the code checkers run in the event
    loop's default executor; size it to ``concurrency``
    (``loop.set_default_executor(ThreadPoolExecutor(n))``) for a sync judge, as
    :func:`grade_many` does for its own loop.
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

    with pacing(pacer), quiet_heap(), prompt_loop():
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
    if _SDK_IN_THREADS.get() and _sdk_judge(judge):
        # one hop per draft: each hand-over between the event loop and a worker waits
        # for the GIL, which 32 threads in flight keep busy
        return await asyncio.to_thread(
            _grade_sync, item, rubric, judge, pacer, skip_judge, registry
        )
    with judge_calls() as calls:
        plan = _start(item, rubric, judge, skip_judge, registry)
        try:
            answer = await check_and_ask(plan, judge)
        except JudgeError as exc:
            _report_throttle(exc, pacer)
            return failed_evaluation(plan, f"{exc.reason}: {exc}", tuple(calls))
    return await finish_async(plan, answer, tuple(calls))


_SDK_IN_THREADS: ContextVar[bool] = ContextVar("gradeloop_sdk_in_threads", default=False)


def _sdk_judge(judge: Judge | None) -> bool:
    """Whether ``judge`` is best asked through its sync client in worker threads: an
    AnthropicJudge (or a subclass), whose sync ``evaluate`` is the same flow as
    ``aevaluate``, on a client that carries gradeloop's pacing middleware (a client
    built by hand does not: its async twin does, so such a judge is awaited), when
    its async twin cannot have the lean asyncio transport (a proxy is configured, or
    ``GRADELOOP_HTTPX_TRANSPORT=1``): httpx's own async stack costs more CPU a
    request than the sync client's threads. Never imports the SDK for a code-only
    run."""
    module = sys.modules.get("gradeloop.models._judge")
    if module is None or not isinstance(judge, module.AnthropicJudge):
        return False
    from ..models._transport import lean_transport_allowed  # httpx: the SDK is loaded

    if lean_transport_allowed():
        return False
    return pace in tuple(getattr(judge.client, "middleware", None) or ())


def _grade_sync(
    item: Item,
    rubric: Rubric,
    judge: Judge | None,
    pacer: Pacer,
    skip_judge: bool,
    registry: Registry | None,
) -> Evaluation:
    """One draft graded as grade() grades it, in the calling (worker) thread; a judge
    failure is the draft's failed evaluation."""
    with judge_calls() as calls:
        plan = _plan(item, rubric, judge, skip_judge, registry)
        try:
            answer = (
                _ask_judge(judge, plan.task, plan.judge_draft, plan.asked, plan.rubric)
                if plan.asked
                else None
            )
        except JudgeError as exc:
            _report_throttle(exc, pacer)
            return failed_evaluation(plan, f"{exc.reason}: {exc}", tuple(calls))
    return finish_grade(plan, answer, tuple(calls))


def _plan(
    item: Item, rubric: Rubric, judge: Judge | None, skip_judge: bool, registry: Registry | None
) -> GradePlan:
    """What grading ``item`` takes: its checkers' results and the judge keys to ask."""
    return run_checks(_start(item, rubric, judge, skip_judge, registry))


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
    draft: str | Transcript
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] | None = None


def as_item(draft: Draft | DraftLike, index: int, task: str) -> Item:
    """A string or a transcript (id ``draft-N``, the shared ``task``) or a DraftItem,
    as an :class:`Item`."""
    if isinstance(draft, str | Transcript):
        return Item(f"draft-{index + 1}", task, draft)
    if isinstance(draft, list | tuple):  # a list of message dicts: read it now, by index
        read = as_transcript(draft, what=f"drafts[{index}]")
        assert read is not None
        return Item(f"draft-{index + 1}", task, read)
    text = getattr(draft, "draft", None)
    if not isinstance(text, str | Transcript):
        raise TypeError(
            f"drafts[{index}] is {type(draft).__name__}: give a string, a Transcript, a "
            "list of message dicts or a DraftItem (with .draft, .task and .output_id)"
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
