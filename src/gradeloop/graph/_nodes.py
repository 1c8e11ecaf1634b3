"""The graph's node functions: the same steps as ``run_loop``, over a JSON-ready state.

Every value a node returns is a plain str/int/float/bool/None/list/dict, so any
LangGraph checkpointer can store it; ``Evaluation`` objects live only inside a node.
This module does not import langgraph at import time (``gradeloop.graph`` loads it
on first use), so it stays importable without the optional extra.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from ..errors import HistoryError, InputError, JudgeError
from ..grading._grade import Judge, grade
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._verdict import as_feedback
from ..loop._records import (
    Generator,
    HistorySink,
    generator_task,
    new_id,
    record_lost,
    record_shadows,
)
from ..loop._result import Iteration, StopReason
from ..models._fingerprint import run_fingerprint
from ..models._usage import Usage, metered

JudgeErrors = Literal["revise", "raise"]

NODE_SETUP, NODE_GENERATE, NODE_EVALUATE = "setup", "generate", "evaluate"


def usage_from(data: Mapping[str, Any] | None) -> Usage:
    """A :class:`Usage` back from its ``to_dict()`` form: the counts, and the cost as
    it was (an unknown cost stays unknown, a priced one keeps its dollars)."""
    return Usage.from_dict(data)


class GraphState(TypedDict, total=False):
    """Every key the graph reads or writes. All values are JSON-ready.

    LangGraph drops any key a node returns that is not declared here, so every key
    is. Invoke with ``{"task": ...}`` alone: the ``setup`` node fills the rest.
    """

    task: str
    """The task; the generator also sees every criterion of the rubric."""
    draft: str
    """The latest draft; at END, the returned one (always judged, if any was)."""
    output_id: str
    """The id of ``draft``."""
    iteration: int
    """Drafts written so far."""
    rounds: int
    """Evaluations attempted so far (judge failures included)."""
    passed: bool
    """``accepted()`` of the merged verdict of ``draft``; False until one passes."""
    issues: list[str]
    """The last valid evaluation's issues: what the next revision receives."""
    feedback: str
    """``issues`` as bullet text (``as_feedback``)."""
    evaluation: dict[str, Any] | None
    """The last valid evaluation, in seed 003's evaluation JSON."""
    judged_draft: str | None
    """The last judged draft, kept so a run ending on a judge failure returns it."""
    judged_output_id: str | None
    """The id of ``judged_draft``."""
    judge_error: str | None
    """Why the latest draft's judging failed, if it did."""
    judge_failures: int
    """Judge failures in a row."""
    stop_reason: str | None
    """``"passed"``, ``"max_rounds"`` or ``"evaluator_failed"`` once the graph ends."""
    loop_id: str
    """The id this run has in the history store (when the graph was given one)."""
    generation: dict[str, Any]
    """The latest draft's generation time and usage (for its history record)."""
    trajectory: list[float]
    """The overall score of every judged draft, in order."""
    usage: dict[str, Any]
    """Tokens and cost spent so far by both models (``Usage.to_dict()``)."""
    elapsed_ms: float
    """Time spent inside the nodes so far (time between a crash and a resume excluded)."""


class Nodes:
    """The three nodes and the routing decision, bound to one rubric and two models."""

    def __init__(
        self,
        rubric: Rubric,
        *,
        generator: Generator,
        judge: Judge | None,
        max_rounds: int,
        max_judge_failures: int,
        judge_errors: JudgeErrors,
        store: HistorySink | None,
        registry: Registry | None,
        config: Mapping[str, Any] | None,
    ) -> None:
        self.rubric, self.generator, self.judge = rubric, generator, judge
        self.max_rounds, self.max_judge_failures = max_rounds, max_judge_failures
        self.judge_errors, self.store, self.registry = judge_errors, store, registry
        self.config = dict(config or {})

    # -- the decision on the retry edge -------------------------------------------------

    def decide(self, state: Mapping[str, Any]) -> StopReason | None:
        """Why the graph stops after an evaluation, or None to revise.

        The gate and the cap sit in this one function, which the conditional edge
        calls, so no path through the graph iterates without both.
        """
        if state.get("passed") is True:  # written only from accepted() of the merged verdict
            return "passed"
        if state.get("judge_error") is not None and (
            state.get("evaluation") is None  # nothing was ever judged: nothing to revise on
            or state.get("judge_failures", 0) >= self.max_judge_failures
        ):
            return "evaluator_failed"
        if state.get("rounds", 0) >= self.max_rounds:
            return "max_rounds"
        return None

    # -- nodes --------------------------------------------------------------------------

    def setup(self, state: GraphState) -> dict[str, Any]:
        """Fill every state key, so ``{"task": ...}`` is a complete input.

        It also resets a thread that is invoked again with new input, which LangGraph
        starts from START with the old values still in place.
        """
        task = state.get("task")
        if not isinstance(task, str):
            raise InputError(
                f"invoke the graph with {{'task': '<the task text>'}}; got task={task!r}"
            )
        loop_id = new_id("loop")
        if self.store is not None:
            self.store.start_loop(
                loop_id, task=task, rubric=self.rubric.to_dict(), config=self._history_config()
            )
        return {
            "draft": "",
            "output_id": "",
            "iteration": 0,
            "rounds": 0,
            "passed": False,
            "issues": [],
            "feedback": "",
            "evaluation": None,
            "judged_draft": None,
            "judged_output_id": None,
            "judge_error": None,
            "judge_failures": 0,
            "stop_reason": None,
            "loop_id": loop_id,
            "generation": {},
            "trajectory": [],
            "usage": Usage().to_dict(),
            "elapsed_ms": 0.0,
        }

    def generate(self, state: GraphState) -> dict[str, Any]:
        """Write the first draft, or revise the latest one on the last valid issues."""
        start = time.perf_counter()
        gen_task = generator_task(state["task"], self.rubric)
        draft = state.get("draft", "")
        # Call shapes match run_loop exactly: a plain object with only
        # generate(task, draft, issues) sees the same arguments from both.
        with metered() as meter:
            try:
                if draft:
                    text = self.generator.generate(gen_task, draft, list(state.get("issues", [])))
                else:
                    text = self.generator.generate(gen_task)
            except BaseException as exc:
                # a draft that failed (cut off at max_tokens, say) was still paid for
                record_lost(self.store, state["loop_id"], meter, exc)
                raise
        if not isinstance(text, str):
            raise TypeError(f"the generator returned {type(text).__name__}, not str")
        ms = (time.perf_counter() - start) * 1000
        usage = meter.usage
        update: dict[str, Any] = {
            "draft": text,
            "output_id": new_id("out"),
            "iteration": state.get("iteration", 0) + 1,
            "generation": {"time_ms": ms, "usage": usage.to_dict()},
            "judge_error": None,
            "usage": (usage_from(state.get("usage")) + usage).to_dict(),
            "elapsed_ms": state.get("elapsed_ms", 0.0) + ms,
        }
        if self.max_rounds < 1:  # nothing will be judged: report the draft as not passed
            update.update(passed=False, stop_reason="max_rounds")
            merged = {**state, **update}
            self._record(merged, self._iteration(merged))
            self._finish(merged)
        return update

    def evaluate(self, state: GraphState) -> dict[str, Any]:
        """Grade the latest draft: checkers first, then the judge, merged and gated."""
        it = self._iteration(state)
        start = time.perf_counter()
        with metered() as meter:
            try:
                ev = grade(
                    it.content,
                    self.rubric,
                    task=state["task"],
                    judge=self.judge,
                    registry=self.registry,
                )
            except JudgeError as exc:
                if self.judge_errors == "raise":
                    raise  # the checkpoint stays before this node: invoke(None) retries it
                it.judge_error = f"{exc.reason}: {exc}"
            else:
                trajectory = state.get("trajectory") or []
                delta = (ev.overall_score or 0.0) - trajectory[-1] if trajectory else None
                it.evaluation = ev.with_ids(it.output_id, delta)
        it.evaluation_time_ms = (time.perf_counter() - start) * 1000
        it.evaluation_usage = meter.usage
        update = self._judged(state, it)
        merged = {**state, **update}
        self._record(merged, it)
        _emit_round(merged, it, self.max_rounds)
        if update["stop_reason"] is not None:
            if it.evaluation is None and state.get("judged_draft") is not None:
                # The latest draft was never judged: stand behind the last one that was.
                update["draft"] = state["judged_draft"]
                update["output_id"] = state["judged_output_id"]
                merged = {**state, **update}
            self._finish(merged)
        return update

    # -- helpers ------------------------------------------------------------------------

    def _judged(self, state: Mapping[str, Any], it: Iteration) -> dict[str, Any]:
        """The state update after judging ``it`` (or failing to)."""
        ev = it.evaluation
        accepted = ev is not None and ev.accepted
        if ev is not None:
            issues = [] if accepted else list(ev.verdict.issues)
        else:  # a judge error is never a draft problem: keep the last valid issues
            issues = list(state.get("issues", []))
        it.feedback = as_feedback(issues) or None
        update: dict[str, Any] = {
            "rounds": state.get("rounds", 0) + 1,
            "passed": accepted,
            "issues": issues,
            "feedback": as_feedback(issues),
            "judge_error": it.judge_error,
            "judge_failures": 0 if ev is not None else state.get("judge_failures", 0) + 1,
            "usage": (usage_from(state.get("usage")) + it.evaluation_usage).to_dict(),
            "elapsed_ms": state.get("elapsed_ms", 0.0) + (it.evaluation_time_ms or 0.0),
        }
        if ev is not None:
            update.update(
                evaluation=ev.to_json(),
                judged_draft=it.content,
                judged_output_id=it.output_id,
                trajectory=[*(state.get("trajectory") or []), ev.overall_score or 0.0],
            )
        update["stop_reason"] = self.decide({**state, **update})
        return update

    def _iteration(self, state: Mapping[str, Any]) -> Iteration:
        generation = state.get("generation") or {}
        return Iteration(
            iteration=state["iteration"],
            output_id=state["output_id"],
            content=state["draft"],
            generation_time_ms=float(generation.get("time_ms", 0.0)),
            generation_usage=usage_from(generation.get("usage")),
        )

    def _record(self, state: Mapping[str, Any], it: Iteration) -> None:
        if self.store is None:
            return
        try:
            self.store.add_iteration(state["loop_id"], it.to_record())
        except HistoryError:
            # A process killed after this write but before LangGraph saved the node's
            # checkpoint re-runs the node on resume; the record is already there.
            if not _already_recorded(self.store, state["loop_id"], it.iteration):
                raise
            return
        record_shadows(self.store, state["loop_id"], it)

    def _finish(self, state: Mapping[str, Any]) -> None:
        if self.store is None:
            return
        returned_judged = state.get("judged_output_id") == state["output_id"]
        trajectory = state.get("trajectory") or []
        self.store.finish_loop(
            state["loop_id"],
            final_output_id=state["output_id"],
            passed=bool(state.get("passed")),
            stop_reason=str(state["stop_reason"]),
            total_time_ms=float(state.get("elapsed_ms", 0.0)),
            final_score=trajectory[-1] if returned_judged and trajectory else None,
        )

    def _history_config(self) -> dict[str, Any]:
        thread_id = None
        try:
            from langgraph.config import get_config

            thread_id = get_config().get("configurable", {}).get("thread_id")
        except (ImportError, RuntimeError):  # called outside a graph run
            pass
        return {
            "engine": "graph",
            "thread_id": thread_id,
            "max_rounds": self.max_rounds,
            "max_judge_failures": self.max_judge_failures,
            "judge_errors": self.judge_errors,
            "return_policy": "last",
            "stagnation_rounds": 0,
            "fingerprint": run_fingerprint(self.judge, self.rubric.to_dict()),
            **self.config,
        }


def _already_recorded(store: HistorySink, loop_id: str, number: int) -> bool:
    iterations = getattr(store, "iterations", None)
    if iterations is None:
        return False
    return any(r.get("iteration") == number for r in iterations(loop_id))


def _emit_round(state: Mapping[str, Any], it: Iteration, max_rounds: int) -> None:
    """Report the round on LangGraph's custom stream (a no-op when nobody listens)."""
    from langgraph.config import get_stream_writer

    ev = it.evaluation
    get_stream_writer()(
        {
            "round": state["rounds"],
            "max_rounds": max_rounds,
            "output_id": it.output_id,
            "score": round(ev.overall_score, 2)
            if ev is not None and ev.overall_score is not None
            else None,
            "passed": bool(ev is not None and ev.accepted),
            "failed_keys": list(ev.failed_keys) if ev is not None else [],
            "judge_error": it.judge_error,
            "usage": it.usage.to_dict(),
            "time_ms": round(it.generation_time_ms + (it.evaluation_time_ms or 0.0), 3),
            "stop_reason": state["stop_reason"],
        }
    )
