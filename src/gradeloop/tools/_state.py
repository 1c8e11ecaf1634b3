"""The in-memory state of a tool-driven loop: its outputs, and how one is found again."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

from ..grading._rubric import Rubric
from ..loop._best import best_of, iteration_rank
from ..loop._result import Iteration, StopReason

__all__ = ["LoopState", "Output", "content_key", "score_of"]


def content_key(text: str) -> str:
    """The key an output is found again by: its text, normalised, hashed."""
    normal = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    return hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(eq=False)
class Output:
    """One output of a tool-driven loop, and how it came to be."""

    loop: LoopState
    it: Iteration
    source: str  # "generated", "revised" or "external" (text the model brought)
    parent: Output | None = None
    revision_feedback: str | None = None
    recorded: bool = False

    @property
    def output_id(self) -> str:
        return self.it.output_id


@dataclass(eq=False)
class LoopState:
    """A tool-driven loop held in memory while the runner lives."""

    loop_id: str
    task: str
    rubric: Rubric
    started: float = field(default_factory=time.perf_counter)
    outputs: list[Output] = field(default_factory=list)
    stop_reason: StopReason | None = None
    final_output_id: str | None = None

    def judged(self) -> list[Output]:
        return [o for o in self.outputs if o.it.evaluation is not None]

    def best(self) -> Output:
        """The output the "best" policy returns (an accepted one first, then the top
        score, ties to the latest); the last one when none was judged."""
        chosen = best_of(self.outputs, lambda o: iteration_rank(o.it))
        return chosen if chosen is not None else self.outputs[-1]


def score_of(out: Output) -> float:
    """The output's overall score, or -1 when it was never judged."""
    ev = out.it.evaluation
    return -1.0 if ev is None else ev.overall_score or 0.0
