"""How tool calls link into loops, and what of them the history store keeps.

A model driving the tools never has to pass an id it did not see: an output is
found again by its text (a hash of the text with line endings and outer whitespace
normalised), and a revision joins the loop of the output it revises.

What is recorded, and when (the store writes each iteration once):

* a loop is started in the store when its first output appears, so
  ``gradeloop history`` lists it at once;
* an output's record is written at its **first successful evaluation**, with that
  evaluation and its issues as ``feedback``; or, if it is revised without ever being
  evaluated, when it is revised, with the feedback it was revised on. A judge
  failure writes nothing (the model may simply evaluate again); a later
  re-evaluation of a recorded output is answered but does not rewrite its record;
* a loop is finished when an evaluation passes (``"passed"``), when an output of a
  loop holding ``max_iterations`` outputs is evaluated (``"max_rounds"``), or when
  the judged scores stop improving over ``stagnation_rounds`` iterations or a
  revision comes back the same text (``"stagnation"``). A loop the model abandons
  stays open: "running" while the process lives, "interrupted" after.

What is kept where: every output handed out gets a ``tool_outputs`` row in the
store (its loop, its text's key, and the output itself until its record is written),
so the text index lives on disk. In memory the ledger keeps only the ``keep_loops``
most recently used loops; any other loop is read back from the store when a call
names one of its outputs. So a long-lived server stays flat however many calls it
serves, and a restarted server continues the loops the last one left open.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ..grading._grade import Evaluation
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._verdict import as_feedback
from ..history._store import HistoryStore, get_optimization_history
from ..loop._records import new_id, record_shadows
from ..loop._result import Iteration, StopReason
from ..loop._similarity import DEFAULT_SIMILARITY, similar
from ..models._fingerprint import run_fingerprint
from ..models._usage import Usage
from ._restore import load_loop
from ._state import LoopState, Output, content_key, score_of

__all__ = ["Ledger", "LoopState", "Output", "content_key"]


class Ledger:
    """The loops of one runner, the text index, and the writes to the store."""

    def __init__(
        self,
        store: HistoryStore,
        *,
        max_iterations: int | None,
        stagnation_rounds: int,
        config: Mapping[str, Any],
        registry: Registry | None = None,
        keep_loops: int = 64,
    ) -> None:
        self.store = store
        self.max_iterations = max_iterations
        self.stagnation_rounds = stagnation_rounds
        self.config = dict(config)
        self.registry = registry
        self.keep_loops = keep_loops
        # the most recently used loops, oldest first; the rest are read back on demand
        self.loops: OrderedDict[str, LoopState] = OrderedDict()

    # -- loops and outputs ---------------------------------------------------------

    def start(self, task: str, rubric: Rubric, origin: str) -> LoopState:
        loop = LoopState(new_id("loop"), task, rubric)
        self.store.start_loop(
            loop.loop_id,
            task=task,
            rubric=rubric.to_dict(),
            config={
                **self.config,
                "mode": "tools",
                "origin": origin,
                # the calling agent is the judge here: only the rubric is known
                "fingerprint": run_fingerprint(None, rubric.to_dict()),
            },
        )
        self._keep(loop)
        return loop

    def _keep(self, loop: LoopState) -> None:
        self.loops[loop.loop_id] = loop
        self.loops.move_to_end(loop.loop_id)
        while len(self.loops) > self.keep_loops:
            self.loops.popitem(last=False)  # everything it holds is in the store

    def loop(self, loop_id: str) -> LoopState | None:
        """The tool-driven loop ``loop_id``, from memory or read back from the store."""
        loop = self.loops.get(loop_id)
        if loop is None:
            loop = load_loop(self.store, loop_id, self.registry)
            if loop is None:
                return None
        self._keep(loop)
        return loop

    def add(
        self,
        loop: LoopState,
        content: str,
        *,
        source: str,
        generation_ms: float = 0.0,
        usage: Usage | None = None,
        parent: Output | None = None,
        revision_feedback: str | None = None,
    ) -> Output:
        it = Iteration(
            iteration=len(loop.outputs) + 1,
            output_id=new_id("out"),
            content=content,
            generation_time_ms=generation_ms,
            generation_usage=usage or Usage(),
        )
        out = Output(loop, it, source, parent, revision_feedback)
        self.store.add_tool_output(
            loop.loop_id,
            it.output_id,
            content_key=content_key(content),
            iteration=it.iteration,
            source=source,
            parent_id=parent.output_id if parent is not None else None,
            revision_feedback=revision_feedback,
            pending=it.generation_json() | {"generation_usage": it.generation_usage.to_dict()},
        )
        loop.outputs.append(out)
        return out

    def find(self, text: str) -> Output | None:
        """The latest output with this text, in whichever loop holds it."""
        found = self.store.tool_output_for(content_key(text))
        if found is None:
            return None
        loop = self.loop(found[0])
        if loop is None:
            return None
        return next((o for o in reversed(loop.outputs) if o.output_id == found[1]), None)

    def at_cap(self, loop: LoopState) -> bool:
        return self.max_iterations is not None and len(loop.outputs) >= self.max_iterations

    # -- evaluation ----------------------------------------------------------------

    def evaluated(self, out: Output, ev: Evaluation, elapsed_ms: float, usage: Usage) -> Evaluation:
        """Link an evaluation to ``out``; the first one is recorded and may end the loop."""
        linked = ev.with_ids(out.output_id, self._improvement(out, ev))
        if out.recorded or out.it.evaluation is not None:
            return linked  # a re-evaluation: answered, not recorded again
        out.it.evaluation = linked
        out.it.evaluation_time_ms, out.it.evaluation_usage = elapsed_ms, usage
        out.it.feedback = as_feedback(linked.verdict.issues) or None
        self.record(out)
        reason = self._stop_reason(out)
        if reason is not None and out.loop.stop_reason is None:
            self.finish(out.loop, reason)
        return linked

    def _improvement(self, out: Output, ev: Evaluation) -> float | None:
        earlier = [
            o for o in out.loop.judged() if o.it.iteration < out.it.iteration and o is not out
        ]
        if not earlier or earlier[-1].it.evaluation is None:
            return None
        return (ev.overall_score or 0.0) - (earlier[-1].it.evaluation.overall_score or 0.0)

    def _stop_reason(self, out: Output) -> StopReason | None:
        assert out.it.evaluation is not None
        if out.it.evaluation.accepted:
            return "passed"
        if self.at_cap(out.loop):
            return "max_rounds"
        if out.parent is not None and similar(
            out.parent.it.content, out.it.content, DEFAULT_SIMILARITY
        ):
            return "stagnation"  # the revision did not change the text
        k = self.stagnation_rounds
        scores = [score_of(o) for o in out.loop.judged()]
        if k and len(scores) > k and max(scores[-k:]) <= max(scores[:-k]):
            return "stagnation"
        return None

    # -- the store -----------------------------------------------------------------

    def record(self, out: Output) -> None:
        """Write ``out``'s iteration record (once)."""
        if out.recorded:
            return
        record = {
            **out.it.to_record(),
            "source": out.source,
            "parent_id": out.parent.output_id if out.parent is not None else None,
            "revision_feedback": out.revision_feedback,
        }
        self.store.add_iteration(out.loop.loop_id, record)
        self.store.settle_tool_output(out.output_id)
        record_shadows(self.store, out.loop.loop_id, out.it)
        out.recorded = True

    def finish(self, loop: LoopState, reason: StopReason) -> None:
        best = loop.best()
        ev = best.it.evaluation
        loop.stop_reason, loop.final_output_id = reason, best.output_id
        self.store.finish_loop(
            loop.loop_id,
            final_output_id=best.output_id,
            passed=bool(ev is not None and ev.accepted),
            stop_reason=reason,
            total_time_ms=(time.perf_counter() - loop.started) * 1000,
            final_score=ev.overall_score if ev is not None else None,
        )

    def history(self, loop_id: str | None) -> dict[str, Any]:
        """The stored history JSON, with this runner's not-yet-recorded outputs merged in."""
        data = get_optimization_history(loop_id, store=self.store)
        loop = self.loop(str(data["loop_id"]))
        if loop is None:
            return data
        stored = {e["output_id"]: e for e in data["iterations"]}
        entries = []
        for out in loop.outputs:
            entry = stored.get(out.output_id)
            if entry is None:  # generated, not yet evaluated or revised
                entry = {
                    "output_id": out.output_id,
                    "content": out.it.content,
                    "evaluation": {"overall_score": None, "passed": False},
                    "pending": True,
                }
            entries.append(entry)
        data["iterations"] = entries
        if data.get("final_output_id") is None and loop.outputs:
            data["final_output_id"] = loop.outputs[-1].output_id
        return data
