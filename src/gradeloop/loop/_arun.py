"""arun_loop(): run_loop for asyncio code, with the same decisions, step for step.

The loop's control flow is written once (``_run._steps``); this module only performs
its steps awaiting: ``agenerate`` / ``aevaluate`` when the generator or judge has
them, else their sync method in a worker thread, and the grading through
:func:`gradeloop.agrade` (checkers off the event loop).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping
from typing import Any

from ..errors import JudgeError
from ..grading._agrade import agrade
from ..grading._grade import Judge
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..integrations import telemetry
from ..models._usage import metered
from ._result import Iteration, LoopResult, StopReason
from ._run import (
    Generator,
    HistorySink,
    OnEvent,
    OnIteration,
    ReturnPolicy,
    Select,
    _finish,
    _Run,
    _start,
    _steps,
    abandon,
)
from ._select import aselect_draft
from ._similarity import DEFAULT_SIMILARITY

__all__ = ["arun_loop"]


class _ARun(_Run):
    """A loop whose steps are awaited."""

    async def agenerate(self, draft: str = "", issues: list[str] | None = None) -> Iteration:
        start = time.perf_counter()
        method = getattr(self.generator, "agenerate", None)
        with metered() as meter:  # this task's calls only (worker threads copy it)
            try:
                text = await self._draft(method, draft, issues)
            except BaseException:
                self.lost(meter)
                raise
        return self.drafted(text, start, meter)

    async def _draft(self, method: Any, draft: str, issues: list[str] | None) -> Any:
        if method is not None and inspect.iscoroutinefunction(method):
            return await (method(self.gen_task, draft, issues) if draft else method(self.gen_task))
        if draft:
            return await asyncio.to_thread(self.generator.generate, self.gen_task, draft, issues)
        return await asyncio.to_thread(self.generator.generate, self.gen_task)

    async def aevaluate(self, it: Iteration) -> None:
        if not self.reuse(it):
            start = time.perf_counter()
            with metered() as meter:
                try:
                    ev = await agrade(
                        it.content, self.rubric, task=self.task, judge=self.judge,
                        registry=self.registry,
                    )  # fmt: skip
                except JudgeError as exc:
                    self.judged_as(it, None, exc)
                except BaseException:
                    self.lost(meter)
                    raise
                else:
                    self.judged_as(it, ev, None)
            it.evaluation_time_ms = (time.perf_counter() - start) * 1000
            it.evaluation_usage = meter.usage
        self.evaluated(it)


async def _adrive(run: _ARun) -> StopReason:
    steps = _steps(run)
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            step = steps.throw(error) if error is not None else steps.send(value)
        except StopIteration as done:
            reason: StopReason = done.value
            return reason
        value, error = None, None
        try:
            if step[0] == "generate":
                value = await run.agenerate(step[1], step[2])
            else:
                await run.aevaluate(step[1])
        except Exception as exc:  # handed to the step that asked (a failed revision)
            error = exc


@telemetry.traced_loop
async def arun_loop(
    task: str,
    rubric: Rubric | Mapping[str, Any],
    *,
    generator: Generator,
    judge: Judge | None,
    max_rounds: int = 3,
    stagnation_rounds: int | None = 2,
    return_policy: ReturnPolicy = "best",
    store: HistorySink | None = None,
    similarity: float | None = DEFAULT_SIMILARITY,
    reuse_identical: bool = True,
    token_budget: int | None = None,
    time_budget: float | None = None,
    max_judge_failures: int = 2,
    on_iteration: OnIteration | None = None,
    registry: Registry | None = None,
    config: Mapping[str, Any] | None = None,
    max_cost_usd: float | None = None,
    on_event: OnEvent | None = None,
    select: Select = "score",
    select_margin: float = 1.0,
) -> LoopResult:
    """Async :func:`~gradeloop.run_loop`: the same parameters, the same decisions and
    the same :class:`~gradeloop.LoopResult`.

    A generator's ``agenerate`` and a judge's ``aevaluate`` are awaited when they
    exist; a generator or judge with only the sync method runs in a worker thread.
    """
    run: _ARun = _start(_ARun, dict(locals()))  # the arguments above, by name
    try:
        reason = await _adrive(run)
    except Exception as exc:
        abandon(run, exc)
        raise
    return _finish(run, reason, await aselect_draft(run, reason))
