"""The loop's rounds, written once, and the two ways its steps are performed.

:func:`rounds` holds every decision of a loop: when to draft, judge, revise and stop.
It yields a step - ``("generate", draft, issues)``, answered with the new
:class:`Iteration`, or ``("evaluate", iteration, None)``, answered with None once the
iteration is judged - and returns the stop reason. A failed revision is thrown back
into it at the step that asked. :func:`perform` does a step blocking (``grade``, the
generator's ``generate``), :func:`aperform` awaiting (``agrade``, the generator's
``agenerate`` when it has one, else ``generate`` in a worker thread); the state they
keep, and every bookkeeping rule, are :class:`~._state.LoopRun`'s.
"""

from __future__ import annotations

import asyncio
import collections.abc
import inspect
import time
from typing import Any

from ..grading._agrade import agrade
from ..grading._grade import grade
from ..grading._verdict import as_feedback
from ..integrations import telemetry
from ..models._failure import failure_line
from ._result import Iteration, StopReason
from ._state import LoopRun

__all__ = ["Step", "aperform", "perform", "rounds"]

# ("generate", draft, issues) -> the new Iteration; ("evaluate", iteration, None) -> None
Step = tuple[str, Any, Any]


def rounds(run: LoopRun) -> collections.abc.Generator[Step, Any, StopReason]:
    """The loop's control flow (see the module docstring)."""
    run.emit("generate_start", 1)
    it: Iteration = yield ("generate", "", None)
    if run.settings.max_rounds < 1:
        run.record(it)
        return "max_rounds"  # nothing was judged, so this can only report False
    for round_no in range(1, run.settings.max_rounds + 1):
        telemetry.start_round(run.loop_id, round_no)
        run.emit("round_start", round_no)
        run.emit("evaluate_start", round_no)
        yield ("evaluate", it, None)
        if it.evaluation is not None:
            run.last_valid, run.judge_failures_in_a_row = it, 0
        else:
            run.judge_failures_in_a_row += 1
        accepted = it.evaluation is not None and it.evaluation.accepted
        issues = run.revision_issues() if run.last_valid is not None and not accepted else []
        it.feedback = as_feedback(issues) or None  # logged even when no revision follows
        reason = run.stop_after(it, round_no)
        run.record(it)
        if reason is not None:
            return reason
        run.emit("generate_start", round_no + 1)
        try:
            it = yield ("generate", it.content, issues)
        except Exception as exc:  # a revision failed: keep what was judged
            run.error = f"the generator failed: {failure_line(exc)}"
            return "generator_failed"
    return "max_rounds"  # unreachable: the last round always returns above


# -- performed blocking --------------------------------------------------------------


def perform(run: LoopRun, step: Step) -> Iteration | None:
    """Do ``step`` blocking: the generator's ``generate``, :func:`~gradeloop.grade`."""
    kind, subject, issues = step
    if kind == "generate":
        start = time.perf_counter()
        with run.drafting() as meter:
            text = run.generator.generate(*run.draft_args(subject, issues))
        return run.drafted(text, start, meter)
    if not run.reuse(subject):
        with run.judging(subject):
            run.judged_as(subject, grade(subject.content, run.rubric, **run.grade_args()))
    run.evaluated(subject)
    return None


# -- performed awaiting --------------------------------------------------------------


async def aperform(run: LoopRun, step: Step) -> Iteration | None:
    """:func:`perform`, awaited: ``agenerate`` when the generator has it (else
    ``generate`` in a worker thread), :func:`~gradeloop.agrade`."""
    kind, subject, issues = step
    if kind == "generate":
        start = time.perf_counter()
        with run.drafting() as meter:  # this task's calls only (worker threads copy it)
            text = await _agenerate(run.generator, run.draft_args(subject, issues))
        return run.drafted(text, start, meter)
    if not run.reuse(subject):
        with run.judging(subject):
            run.judged_as(subject, await agrade(subject.content, run.rubric, **run.grade_args()))
    run.evaluated(subject)
    return None


async def _agenerate(generator: Any, args: tuple[Any, ...]) -> Any:
    method = getattr(generator, "agenerate", None)
    if method is not None and inspect.iscoroutinefunction(method):
        return await method(*args)
    return await asyncio.to_thread(generator.generate, *args)
