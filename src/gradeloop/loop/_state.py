"""One loop's state, its bookkeeping and its stopping decisions, kept in one place.

Both drivers (:mod:`._flow`) keep the same state through the same methods: a draft
written or lost, a draft judged or its judge failed, a round recorded. What differs
between them is only how a generator or a judge is called.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import JudgeError
from ..grading._grade import Evaluation, Judge
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..integrations import telemetry
from ..models._usage import Meter, Usage, metered
from ._best import best_of, iteration_rank
from ._records import Generator, HistorySink, generator_task, new_id, record_lost, record_shadows
from ._result import Iteration, StopReason
from ._settings import LoopSettings
from ._similarity import similar

__all__ = ["LoopEvent", "LoopEventKind", "LoopRun", "OnEvent", "OnIteration"]

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


class LoopRun:
    """The state of one loop. Kept in one place so each step stays small."""

    def __init__(
        self,
        task: str,
        rubric: Rubric,
        generator: Generator,
        judge: Judge | None,
        settings: LoopSettings,
        *,
        store: HistorySink | None = None,
        on_iteration: OnIteration | None = None,
        on_event: OnEvent | None = None,
        registry: Registry | None = None,
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

    # -- drafting -----------------------------------------------------------------

    def draft_args(self, draft: str, issues: list[str] | None) -> tuple[Any, ...]:
        """The generator's arguments: the task alone for a first draft (a plain
        ``generate(task)`` keeps working), else the draft to revise and its issues."""
        return (self.gen_task, draft, issues) if draft else (self.gen_task,)

    @contextmanager
    def drafting(self) -> Iterator[Meter]:
        """Meter a generate (this loop's calls only, even on a shared generator); the
        calls of one that raises are counted as lost before the error goes on."""
        with metered() as meter:
            try:
                yield meter
            except BaseException as exc:
                self.lost(meter, exc)
                raise

    def lost(self, meter: Meter, exc: BaseException | None = None) -> None:
        """Count the calls of a step that raised (a draft cut off at max_tokens, a
        failed revision): they are in no round, but the loop spent them all the same,
        so they go in its usage, its budgets and its history at once."""
        if not meter.records:
            return
        usage = meter.usage
        self.unrounded += usage
        self.usage += usage
        record_lost(self.store, self.loop_id, meter, exc)

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

    # -- judging ------------------------------------------------------------------

    def grade_args(self) -> dict[str, Any]:
        """``grade``'s (and ``agrade``'s) keyword arguments for this loop's drafts."""
        return {"task": self.task, "judge": self.judge, "registry": self.registry}

    @contextmanager
    def judging(self, it: Iteration) -> Iterator[None]:
        """Time and meter the grading of ``it``; a judge failure inside is recorded on
        ``it`` (and goes no further); any other error is counted and propagates."""
        start = time.perf_counter()
        with metered() as meter:  # this loop's calls only, even on a shared judge
            try:
                yield
            except JudgeError as exc:
                it.judge_error = f"{exc.reason}: {exc}"
            except BaseException:  # not a judge failure: it propagates, counted
                self.lost(meter)
                raise
        it.evaluation_time_ms = (time.perf_counter() - start) * 1000
        it.evaluation_usage = meter.usage

    def judged_as(self, it: Iteration, ev: Evaluation) -> None:
        """Record the evaluation of ``it``."""
        it.evaluation = self._with_improvement(ev.with_ids(it.output_id))

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

    def _with_improvement(self, ev: Evaluation) -> Evaluation:
        if self.last_valid is None or self.last_valid.evaluation is None:
            return ev
        delta = (ev.overall_score or 0.0) - (self.last_valid.evaluation.overall_score or 0.0)
        return ev.with_ids(ev.output_id, delta)

    # -- recording ----------------------------------------------------------------

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
