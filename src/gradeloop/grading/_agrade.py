"""agrade(): grade() for asyncio code, with the checkers off the event loop.

It grades exactly as :func:`~gradeloop.grade` does (the same plan, the same merge, the
same checks on whatever the judge returns); only the waiting differs: the code
checkers and any code shadows run in a worker thread while the judge is awaited
(``aevaluate`` when it has one, else its ``evaluate`` in a worker thread).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from ._calls import judge_calls
from ._grade import (
    Evaluation,
    GradePlan,
    Judge,
    _ask_judge,
    _JudgeAnswer,
    call_judge,
    finish_grade,
    run_checks,
    start_plan,
)
from ._registry import Registry
from ._rubric import Criterion, Rubric
from ._transcript import Draft
from ._verdict import Verdict
from ._workers import in_thread

__all__ = ["agrade", "ask_judge_async", "check_and_ask", "evaluate_async", "finish_async"]


async def agrade(
    draft: Draft,
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Judge | None = None,
    skip_judge: bool = False,
    registry: Registry | None = None,
    reference: Draft | None = None,
    metadata: Mapping[str, Any] | None = None,
    checker_timeout: float | None = None,
) -> Evaluation:
    """Async :func:`~gradeloop.grade`: same arguments, same result, same errors.

    A judge with an ``async def aevaluate(task, draft, criteria)`` is awaited; a judge
    with only ``evaluate`` runs in a worker thread, as do the code checkers, so the
    event loop stays free for other drafts. ``checker_timeout`` is
    :func:`~gradeloop.grade`'s.
    """
    plan = start_plan(
        draft,
        rubric,
        task=task,
        judge=judge,
        skip_judge=skip_judge,
        registry=registry,
        reference=reference,
        metadata=metadata,
        checker_timeout=checker_timeout,
    )
    with judge_calls() as calls:
        answer = await check_and_ask(plan, judge)
    return await finish_async(plan, answer, tuple(calls))


async def check_and_ask(plan: GradePlan, judge: Any) -> _JudgeAnswer | None:
    """Run ``plan``'s checkers in a worker thread while the judge is asked (what it is
    asked depends on the rubric alone, and checkers never raise: a broken one is a
    failed key), so the request is on its way before the checkers end. Both are done
    when this returns or raises; the judge's failure is raised after the checkers
    filled ``plan.results``.
    """
    if not plan.rubric.code_criteria:
        return await ask_judge_async(plan, judge)
    checking = asyncio.ensure_future(in_thread(run_checks, plan))
    try:
        return await ask_judge_async(plan, judge)
    finally:
        await checking


async def ask_judge_async(plan: GradePlan, judge: Any) -> _JudgeAnswer | None:
    """The judge's answer for ``plan`` (None when it is not asked), awaited.

    Raises :class:`~gradeloop.errors.JudgeError` as :func:`~gradeloop.grade` does.
    """
    if not plan.asked:
        return None
    shown = plan.judge_draft  # the text, or the transcript rendered
    outcome = await _outcome(judge, plan.task, shown, plan.asked)
    return _ask_judge(_Replay(outcome), plan.task, shown, plan.asked, plan.rubric)


async def finish_async(
    plan: GradePlan, answer: _JudgeAnswer | None, calls: tuple[Any, ...] = ()
) -> Evaluation:
    """:func:`finish_grade`, in a worker thread when it runs code shadows."""
    if _runs_code_after_the_judge(plan):
        return await in_thread(finish_grade, plan, answer, calls)
    return finish_grade(plan, answer, calls)


async def evaluate_async(
    judge: Any, task: str, draft: str, criteria: Sequence[Criterion]
) -> Verdict:
    """The judge's verdict, awaited: ``aevaluate`` if the judge has it, else
    ``evaluate`` in a worker thread. The raw answer is checked as grade() checks it."""
    return call_judge(_Replay(await _outcome(judge, task, draft, criteria)), task, draft, criteria)


async def _outcome(
    judge: Any, task: str, draft: str, criteria: Sequence[Criterion]
) -> Any | Exception:
    """What the judge returned, or the exception it raised (replayed by _Replay, so the
    sync path's typing of failures applies unchanged)."""
    method = getattr(judge, "aevaluate", None)
    try:
        if method is not None and inspect.iscoroutinefunction(method):
            return await method(task, draft, criteria)
        return await in_thread(judge.evaluate, task, draft, criteria)
    except Exception as exc:
        return exc


class _Replay:
    """A judge that gives back an answer already obtained (or raises its exception)."""

    def __init__(self, outcome: Any | Exception) -> None:
        self._outcome = outcome

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        if isinstance(self._outcome, Exception):
            raise self._outcome
        return self._outcome


def _runs_code_after_the_judge(plan: GradePlan) -> bool:
    """Whether finishing runs checkers (code shadows), which belong off the loop."""
    return any(c.shadow_source == "code" for c in plan.rubric.shadowed)
