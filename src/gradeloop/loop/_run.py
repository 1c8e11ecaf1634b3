"""The evaluator-optimizer loop: draft, judge, revise, stop, and report honestly.

Invariants (each pinned by a test that fails without it):

* one generate before the loop; each round one evaluation; each round but the last
  one revising generate. Every draft that can be returned was judged, and no
  generate ever runs after the last evaluation.
* ``passed`` is the returned draft's own ``accepted()``; no path turns an honest
  False into True; a draft whose evaluation failed is never returned as passed.
* Feedback reaches the generator as bullet text with the previous draft; the
  generator's task text carries every criterion, code-filled ones included.
* A judge failure is recorded; the loop revises on the last valid evaluation's
  issues (never on the error text), and stops at once if nothing was ever judged.
"""

from __future__ import annotations

import collections.abc
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InputError, JudgeError
from ..grading._grade import Evaluation, Judge, grade
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._verdict import as_feedback
from ..integrations import telemetry
from ..judging._family import warn_same_family
from ..models._failure import failure_line
from ..models._fingerprint import run_fingerprint
from ..models._usage import Meter, Usage, metered
from ._best import best_of, iteration_rank
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
from ._select import select_draft
from ._settings import LoopSettings
from ._similarity import DEFAULT_SIMILARITY, similar

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
    "Step",
    "abandon",
    "generator_task",
    "new_id",
    "optimize",
    "record_lost",
    "record_selection",
    "record_shadows",
    "run_loop",
]

ReturnPolicy = Literal["best", "last"]
Select = Literal["score", "pairwise"]
OnIteration = Callable[[Iteration], None]
LoopEventKind = Literal["generate_start", "round_start", "evaluate_start", "iteration"]


@dataclass(frozen=True)
class LoopEvent:
    """What the loop is about to do, or has just done, as it happens.

    ``kind`` is ``"generate_start"`` (drafting: ``round`` is the round the draft is
    for), ``"round_start"`` and ``"evaluate_start"`` (judging round ``round``), or
    ``"iteration"`` (round ``round`` is recorded; ``iteration`` holds it).
    """

    kind: LoopEventKind
    loop_id: str
    round: int
    iteration: Iteration | None = None


OnEvent = Callable[[LoopEvent], None]


class _Run:
    """The state of one loop. Kept in one place so each step stays small."""

    def __init__(
        self,
        task: str,
        rubric: Rubric,
        generator: Generator,
        judge: Judge | None,
        settings: LoopSettings,
        store: HistorySink | None,
        on_iteration: OnIteration | None,
        registry: Registry | None,
        on_event: OnEvent | None = None,
    ) -> None:
        self.task, self.rubric, self.settings = task, rubric, settings
        self.generator, self.judge, self.registry = generator, judge, registry
        self.store, self.on_iteration, self.on_event = store, on_iteration, on_event
        self.loop_id = new_id("loop")
        self.gen_task = generator_task(task, rubric)
        self.history: list[Iteration] = []
        # Kept as the loop goes, so no round re-reads the whole history (a loop of
        # 1,000 rounds would otherwise cost the square of that):
        self.usage = Usage()  # every call so far
        self.unrounded = Usage()  # the calls of generates that raised: in no round
        self.judged: dict[str, Iteration] = {}  # draft text -> first judged iteration
        self.scores: list[float] = []  # overall score of each judged round
        self.best_before = -1.0  # the best score before the stagnation window
        self.last_valid: Iteration | None = None
        self.judge_failures_in_a_row = 0
        self.error: str | None = None
        self.selection: Any = None  # a _select.Selection, when select="pairwise" compared
        self.started = time.perf_counter()

    # -- the steps ----------------------------------------------------------------

    def generate(self, draft: str = "", issues: list[str] | None = None) -> Iteration:
        start = time.perf_counter()
        with metered() as meter:  # this loop's calls only, even on a shared generator
            try:
                if draft:
                    text = self.generator.generate(self.gen_task, draft, issues)
                else:
                    text = self.generator.generate(self.gen_task)
            except BaseException:
                self.lost(meter)
                raise
        return self.drafted(text, start, meter)

    def lost(self, meter: Meter) -> None:
        """Count the calls of a step that raised (a draft cut off at max_tokens, a
        failed revision): they are in no round, but the loop spent them all the same,
        so they go in its usage, its budgets and its history at once."""
        if not meter.records:
            return
        usage = meter.usage
        self.unrounded += usage
        self.usage += usage
        record_lost(self.store, self.loop_id, meter)

    def drafted(self, text: object, start: float, meter: Meter) -> Iteration:
        """The new iteration for a draft the generator returned."""
        if not isinstance(text, str):
            raise TypeError(f"the generator returned {type(text).__name__}, not str")
        it = Iteration(
            iteration=len(self.history) + 1,
            output_id=new_id("out"),
            content=text,
            generation_time_ms=(time.perf_counter() - start) * 1000,
            generation_usage=meter.usage,
        )
        self.history.append(it)
        self.usage += it.generation_usage
        return it

    def evaluate(self, it: Iteration) -> None:
        """Judge ``it`` (or reuse the verdict of an identical judged draft)."""
        self._evaluate(it)
        self.evaluated(it)

    def evaluated(self, it: Iteration) -> None:
        """Keep the running totals once ``it`` is judged (or its judge failed)."""
        self.usage += it.evaluation_usage
        if it.evaluation is None:
            return
        self.judged.setdefault(it.content, it)
        self.scores.append(it.evaluation.overall_score or 0.0)
        k = self.settings.stagnation_rounds or 0
        if k and len(self.scores) > k:  # one score leaves the window for "before"
            self.best_before = max(self.best_before, self.scores[-k - 1])

    def reuse(self, it: Iteration) -> bool:
        """Give ``it`` the verdict of an identical judged draft, if there is one."""
        # A dict keyed by the text finds an identical judged draft in one hash
        # lookup (the string's hash is computed once), not a scan of every draft.
        twin = self.judged.get(it.content) if self.settings.reuse_identical else None
        if twin is None or twin.evaluation is None:
            return False
        it.evaluation = self._with_improvement(twin.evaluation.with_ids(it.output_id))
        it.reused_from, it.evaluation_time_ms = twin.output_id, 0.0
        return True

    def judged_as(self, it: Iteration, ev: Evaluation | None, error: JudgeError | None) -> None:
        """Record the outcome of grading ``it`` (an evaluation, or the judge's failure)."""
        if error is not None:
            it.judge_error = f"{error.reason}: {error}"
        elif ev is not None:
            it.evaluation = self._with_improvement(ev.with_ids(it.output_id))

    def _evaluate(self, it: Iteration) -> None:
        if self.reuse(it):
            return
        start = time.perf_counter()
        with metered() as meter:  # this loop's calls only, even on a shared judge
            try:
                ev = grade(
                    it.content,
                    self.rubric,
                    task=self.task,
                    judge=self.judge,
                    registry=self.registry,
                )
            except JudgeError as exc:
                self.judged_as(it, None, exc)
            except BaseException:  # not a judge failure: it propagates, counted
                self.lost(meter)
                raise
            else:
                self.judged_as(it, ev, None)
        it.evaluation_time_ms = (time.perf_counter() - start) * 1000
        it.evaluation_usage = meter.usage

    def _with_improvement(self, ev: Evaluation) -> Evaluation:
        if self.last_valid is None or self.last_valid.evaluation is None:
            return ev
        delta = (ev.overall_score or 0.0) - (self.last_valid.evaluation.overall_score or 0.0)
        return ev.with_ids(ev.output_id, delta)

    def record(self, it: Iteration) -> None:
        """Commit the iteration now, so a loop killed later keeps it."""
        telemetry.iteration(it)
        if self.store is not None:
            self.store.add_iteration(self.loop_id, it.to_record())
            record_shadows(self.store, self.loop_id, it)
        if self.on_iteration is not None:
            self.on_iteration(it)
        self.emit("iteration", it.iteration, it)

    def emit(self, kind: LoopEventKind, round_no: int, it: Iteration | None = None) -> None:
        """Tell ``on_event`` what is happening (nothing when there is no listener)."""
        if self.on_event is not None:
            self.on_event(LoopEvent(kind, self.loop_id, round_no, it))

    def revision_issues(self) -> list[str]:
        """The last VALID evaluation's issues: a judge error is never a draft problem."""
        assert self.last_valid is not None and self.last_valid.evaluation is not None
        return list(self.last_valid.evaluation.verdict.issues)

    # -- decisions ----------------------------------------------------------------

    def stop_after(self, it: Iteration, round_no: int) -> StopReason | None:
        """Why the loop stops after judging ``it`` in round ``round_no``, if it does."""
        s = self.settings
        if it.evaluation is not None and it.evaluation.accepted:
            return "passed"
        if it.evaluation is None and self.last_valid is None:
            return "evaluator_failed"  # nothing was ever judged: nothing to revise on
        if it.evaluation is None and self.judge_failures_in_a_row >= s.max_judge_failures:
            return "evaluator_failed"
        if round_no >= s.max_rounds:
            return "max_rounds"
        if self._stagnated(it):
            return "stagnation"
        if (
            s.token_budget is not None
            and self.usage.total_input + self.usage.output_tokens >= s.token_budget
        ):
            return "token_budget"
        if s.max_cost_usd is not None and self._over_cost(s.max_cost_usd):
            return "cost_budget"
        if s.time_budget is not None and self.elapsed_s >= s.time_budget:
            return "time_budget"
        return None

    def _over_cost(self, limit: float) -> bool:
        cost = self.usage.cost_usd
        if cost is None:  # a call's price is unknown: the budget cannot be kept, stop
            self.error = (
                "the loop's cost is unknown (a model it used has no price; see "
                "GRADELOOP_PRICES), so max_cost_usd cannot be kept"
            )
            return True
        return cost >= limit

    def _stagnated(self, it: Iteration) -> bool:
        s = self.settings
        if it.evaluation is None:
            return False
        if (
            s.similarity is not None
            and len(self.history) >= 2
            and similar(self.history[-2].content, it.content, s.similarity)
        ):
            return True  # the revision did not change the text
        if not s.stagnation_rounds:
            return False
        if len(self.scores) <= s.stagnation_rounds:
            return False
        return max(self.scores[-s.stagnation_rounds :]) <= self.best_before

    def choose(self) -> Iteration:
        """The iteration to return: judged drafts only, by the return policy."""
        judged = [h for h in self.history if h.evaluation is not None]
        if not judged:
            return self.history[-1]  # never judged: can only be reported as not passed
        if self.settings.return_policy == "last":
            return judged[-1]
        chosen = best_of(judged, iteration_rank)  # accepted first, then score, ties to latest
        assert chosen is not None
        return chosen

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started


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
    judge compares them in both orders (:func:`~gradeloop.compare_drafts`: two
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
    run = _start(_Run, dict(locals()))  # the arguments above, by name
    try:
        reason = _drive(run)
    except Exception as exc:
        abandon(run, exc)
        raise
    return _finish(run, reason, select_draft(run, reason))


def abandon(run: _Run, exc: Exception) -> None:
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


def _start(kind: type[_Run], args: Mapping[str, Any]) -> Any:
    """Validate ``run_loop``'s (or ``arun_loop``'s) arguments and open the loop."""
    rubric, registry = args["rubric"], args["registry"]
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    settings = LoopSettings(
        max_rounds=args["max_rounds"],
        stagnation_rounds=args["stagnation_rounds"],
        return_policy=args["return_policy"],
        similarity=args["similarity"],
        reuse_identical=args["reuse_identical"],
        token_budget=args["token_budget"],
        time_budget=args["time_budget"],
        max_judge_failures=args["max_judge_failures"],
        max_cost_usd=args["max_cost_usd"],
        select=args.get("select", "score"),
        select_margin=args.get("select_margin", 1.0),
    )
    if settings.select == "pairwise" and rubric.judge_keys:
        judge = args["judge"]
        if judge is not None and not callable(getattr(judge, "prefer", None)):
            raise InputError(
                f"select='pairwise' needs a judge with prefer(); {type(judge).__name__} has "
                "none (AnthropicJudge, OpenAICompatibleJudge and Jury have it)"
            )
    warn_same_family(args["generator"], args["judge"])
    store = args["store"]
    run = kind(
        args["task"],
        rubric,
        args["generator"],
        args["judge"],
        settings,
        store,
        args["on_iteration"],
        registry,
        args["on_event"],
    )
    if store is not None:
        store.start_loop(
            run.loop_id,
            task=args["task"],
            rubric=rubric.to_dict(),
            config={
                **settings.to_config(),
                "fingerprint": run_fingerprint(args["judge"], rubric.to_dict()),
                **(args["config"] or {}),
            },
        )
    return run


# A step the loop asks its driver for: ("generate", draft, issues) -> the new
# Iteration, or ("evaluate", iteration, None) -> None. The decisions live in _steps,
# written once; _drive performs the steps blocking, arun_loop's driver awaiting them.
Step = tuple[str, Any, Any]


def _steps(run: _Run) -> collections.abc.Generator[Step, Any, StopReason]:
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


def _drive(run: _Run) -> StopReason:
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
                value = run.generate(step[1], step[2])
            else:
                run.evaluate(step[1])
        except Exception as exc:  # handed to the step that asked (a failed revision)
            error = exc


def _finish(run: _Run, reason: StopReason, chosen: Iteration | None = None) -> LoopResult:
    chosen = chosen if chosen is not None else run.choose()
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
