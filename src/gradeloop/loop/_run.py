"""The evaluator-optimizer loop: draft, judge, revise, stop, and report honestly.

Invariants (each pinned by a test that fails without it, through both drivers):

* one generate before the loop; each round one evaluation; each round but the last
  one revising generate. Every draft that can be returned was judged, and no
  generate ever runs after the last evaluation.
* ``passed`` is the returned draft's own ``accepted()``; no path turns an honest
  False into True; a draft whose evaluation failed is never returned as passed.
* Feedback reaches the generator as bullet text with the previous draft; the
  generator's task text carries every criterion, code-filled ones included.
* A judge failure is recorded; the loop revises on the last valid evaluation's
  issues (never on the error text), and stops at once if nothing was ever judged.

:func:`run_loop` and :func:`arun_loop` are two thin drivers of one flow
(:func:`._flow.rounds`): the same settings (:class:`LoopSettings`), the same state
(:class:`._state.LoopRun`), the same decisions; one blocks, the other awaits.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..grading._drivers import adrive, drive
from ..grading._grade import Judge
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..integrations import telemetry
from ..judging._family import warn_same_family
from ..models._fingerprint import run_fingerprint
from ._flow import aperform, perform, rounds
from ._records import (
    Generator,
    HistorySink,
    generator_task,
    new_id,
    record_lost,
    record_selection,
    record_shadows,
)
from ._result import Iteration, LoopResult, StopReason
from ._select import aselect_draft, select_draft
from ._settings import LoopSettings, ReturnPolicy, Select
from ._similarity import DEFAULT_SIMILARITY
from ._state import LoopEvent, LoopEventKind, LoopRun, OnEvent, OnIteration

__all__ = [
    "Generator",
    "HistorySink",
    "LoopEvent",
    "LoopEventKind",
    "LoopSettings",
    "OnEvent",
    "OnIteration",
    "ReturnPolicy",
    "Select",
    "abandon",
    "arun_loop",
    "generator_task",
    "new_id",
    "open_run",
    "optimize",
    "record_lost",
    "record_selection",
    "record_shadows",
    "run_loop",
]


@telemetry.traced_loop
def run_loop(
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
    """Draft, judge, revise until a draft is accepted or a stop condition holds.

    Stops with ``"passed"``, ``"max_rounds"``, ``"stagnation"`` (no overall-score
    improvement over ``stagnation_rounds`` consecutive judged rounds, or a revision
    that is the same text as the draft before it by ``similarity``),
    ``"evaluator_failed"`` (the judge failed before anything was judged, or
    ``max_judge_failures`` times in a row), ``"generator_failed"`` (a revision
    raised), ``"token_budget"``, ``"cost_budget"`` (the dollars spent reached
    ``max_cost_usd``, or a call's price is unknown so the budget cannot be kept) or
    ``"time_budget"``. ``return_policy="best"`` returns an accepted draft if any was
    accepted, else the highest-scoring judged draft (ties to the latest); ``"last"``
    the last judged one. The returned ``passed`` is always that draft's own verdict.

    ``select="pairwise"`` (with ``return_policy="best"``): when no draft passed and
    the best two distinct drafts' overall scores are within ``select_margin``, the
    judge compares them in both orders (:func:`~gradeloop.judging.compare_drafts`: two
    ``prefer`` requests after the last round, none otherwise) and the winner is
    returned; a tie keeps the earlier draft, a failed comparison the score's choice
    (``LoopResult.selection`` says what happened). The judge needs ``prefer``.
    A generator and judge of the same model family draw a
    :class:`~gradeloop.errors.GradeloopWarning`.

    With ``store`` (a :class:`~gradeloop.HistoryStore`), each iteration is
    committed as it completes. ``on_iteration`` gets each iteration once it is
    recorded; ``on_event`` gets a :class:`LoopEvent` before each draft and each
    judging, and after each recorded round. A failure of the very first generate
    propagates.
    """
    settings = LoopSettings(
        max_rounds=max_rounds,
        stagnation_rounds=stagnation_rounds,
        return_policy=return_policy,
        similarity=similarity,
        reuse_identical=reuse_identical,
        token_budget=token_budget,
        time_budget=time_budget,
        max_judge_failures=max_judge_failures,
        max_cost_usd=max_cost_usd,
        select=select,
        select_margin=select_margin,
    )
    run = open_run(
        task, rubric, generator, judge, settings, store=store, on_iteration=on_iteration,
        on_event=on_event, registry=registry, config=config,
    )  # fmt: skip
    try:
        reason = drive(rounds(run), functools.partial(perform, run))
    except Exception as exc:
        abandon(run, exc)
        raise
    return finish(run, reason, select_draft(run, reason))


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
    settings = LoopSettings(
        max_rounds=max_rounds,
        stagnation_rounds=stagnation_rounds,
        return_policy=return_policy,
        similarity=similarity,
        reuse_identical=reuse_identical,
        token_budget=token_budget,
        time_budget=time_budget,
        max_judge_failures=max_judge_failures,
        max_cost_usd=max_cost_usd,
        select=select,
        select_margin=select_margin,
    )
    run = open_run(
        task, rubric, generator, judge, settings, store=store, on_iteration=on_iteration,
        on_event=on_event, registry=registry, config=config,
    )  # fmt: skip
    try:
        reason = await adrive(rounds(run), functools.partial(aperform, run))
    except Exception as exc:
        abandon(run, exc)
        raise
    return finish(run, reason, await aselect_draft(run, reason))


def open_run(
    task: str,
    rubric: Rubric | Mapping[str, Any],
    generator: Generator,
    judge: Judge | None,
    settings: LoopSettings,
    *,
    store: HistorySink | None,
    on_iteration: OnIteration | None,
    on_event: OnEvent | None,
    registry: Registry | None,
    config: Mapping[str, Any] | None,
) -> LoopRun:
    """Check what a loop was given, and open it (in the history too, with ``store``)."""
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    without_prefer = judge is not None and not callable(getattr(judge, "prefer", None))
    if settings.select == "pairwise" and rubric.judge_keys and without_prefer:
        raise InputError(
            f"select='pairwise' needs a judge with prefer(); {type(judge).__name__} has "
            "none (AnthropicJudge, OpenAICompatibleJudge and Jury have it)"
        )
    warn_same_family(generator, judge)
    run = LoopRun(
        task, rubric, generator, judge, settings,
        store=store, on_iteration=on_iteration, on_event=on_event, registry=registry,
    )  # fmt: skip
    if store is not None:
        store.start_loop(
            run.loop_id,
            task=task,
            rubric=rubric.to_dict(),
            config={
                **settings.to_config(),
                "fingerprint": run_fingerprint(judge, rubric.to_dict()),
                **(config or {}),
            },
        )
    return run


def abandon(run: LoopRun, exc: Exception) -> None:
    """Record in the history that the loop ended on ``exc`` before anything could be
    returned (its first draft failed): ``generator_failed``, with no output."""
    if run.store is not None and not run.history:
        run.store.finish_loop(
            run.loop_id,
            final_output_id="",
            passed=False,
            stop_reason="generator_failed",
            total_time_ms=run.elapsed_s * 1000,
            final_score=None,
        )


def finish(run: LoopRun, reason: StopReason, chosen: Iteration) -> LoopResult:
    """The loop's result for the ``chosen`` draft, with its own verdict (and the
    history's closing record)."""
    passed = bool(chosen.evaluation is not None and chosen.evaluation.accepted)
    total_ms = run.elapsed_s * 1000
    if run.store is not None:
        record_selection(run.store, run.loop_id, run.selection)
        run.store.finish_loop(
            run.loop_id,
            final_output_id=chosen.output_id,
            passed=passed,
            stop_reason=reason,
            total_time_ms=total_ms,
            final_score=chosen.evaluation.overall_score if chosen.evaluation else None,
        )
    return LoopResult(
        draft=chosen.content,
        passed=passed,
        stop_reason=reason,
        loop_id=run.loop_id,
        history=run.history,
        output_id=chosen.output_id,
        total_time_ms=total_ms,
        evaluation=chosen.evaluation,
        error=run.error,
        selection=run.selection,
        unrounded_usage=run.unrounded,
    )


def optimize(
    task: str,
    rubric: Rubric | Mapping[str, Any],
    *,
    generator: Generator,
    judge: Judge | None,
    max_rounds: int = 3,
) -> tuple[str, bool]:
    """The plain loop: returns ``(last judged draft, whether it was accepted)``.

    A thin view of :func:`run_loop` with fixed, simple semantics: the last
    judged draft is returned, and no stagnation or identical-draft shortcuts
    change the call sequence (``["generate", "evaluate"] * N`` when every round
    fails; 2 calls when round one passes; one generate and False at caps below 1).
    """
    result = run_loop(
        task,
        rubric,
        generator=generator,
        judge=judge,
        max_rounds=max_rounds,
        stagnation_rounds=0,
        return_policy="last",
        similarity=None,
        reuse_identical=False,
    )
    return result.draft, result.passed
