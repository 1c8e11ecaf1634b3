"""What a many-draft grading has done so far, and a live rich display of it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..grading._grade import Evaluation

__all__ = ["ManyProgress", "ProgressBar", "ProgressCallback", "ResultCallback"]


@dataclass
class ManyProgress:
    """Running totals of a :func:`gradeloop.grade_many` run.

    ``judge_calls`` counts requests sent; ``cached`` counts verdicts answered by the
    verdict cache (no request, no tokens). ``cost_usd`` is None once any call's
    price was unknown. ``throttled`` counts the 429/529 answers that slowed the run
    down, and ``concurrency`` is the number of drafts now allowed in flight.
    """

    total: int
    done: int = 0
    accepted: int = 0
    judge_failed: int = 0
    judge_calls: int = 0
    cached: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    throttled: int = 0
    concurrency: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, evaluation: Evaluation) -> None:
        """Count one finished draft."""
        self.done += 1
        self.accepted += evaluation.accepted
        self.judge_failed += evaluation.judge_error is not None
        for call in evaluation.judge_calls:
            if getattr(call, "cached", False):
                self.cached += 1
                continue
            self.judge_calls += 1
            usage = call.usage
            self.tokens += usage.total_input + usage.output_tokens
            self.cost_usd = (
                None
                if self.cost_usd is None or usage.cost_usd is None
                else self.cost_usd + usage.cost_usd
            )

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.started

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first draft is done)."""
        if not self.done:
            return None
        return self.elapsed_s / self.done * (self.total - self.done)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready totals."""
        out = {k: v for k, v in vars(self).items() if k != "started"}
        out["elapsed_s"] = round(self.elapsed_s, 3)
        return out


ProgressCallback = Callable[[ManyProgress], None]

#: Called with a draft's index in the input and its evaluation as soon as it is graded.
ResultCallback = Callable[[int, Evaluation], None]


class ProgressBar:
    """A live bar on stderr: done/total, accepted, judge calls (cached), tokens,
    cost, elapsed and ETA. Shown only when stderr is a terminal."""

    def __init__(self, total: int, *, console: Console | None = None) -> None:
        self.console = console or Console(file=sys.stderr, highlight=False)
        self.enabled = self.console.is_terminal
        self._progress = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("accepted {task.fields[accepted]}"),
            TextColumn("judge calls {task.fields[calls]} ({task.fields[cached]} cached)"),
            TextColumn("tokens {task.fields[tokens]}"),
            TextColumn("{task.fields[cost]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            disable=not self.enabled,
        )
        self._task: TaskID = self._progress.add_task(
            "grading", total=total, accepted=0, calls=0, cached=0, tokens=0, cost=""
        )

    def __enter__(self) -> ProgressBar:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def __call__(self, state: ManyProgress) -> None:
        cost = "" if state.cost_usd is None else f"${state.cost_usd:,.4f}"
        self._progress.update(
            self._task,
            completed=state.done,
            accepted=state.accepted,
            calls=state.judge_calls,
            cached=state.cached,
            tokens=f"{state.tokens:,}",
            cost=cost,
        )
