"""What the loop writes down and how: the generator and history protocols, ids, the
task text the generator sees, and the optional records a store may keep (shadows,
pairwise selections, calls that belong to no round). The graph tier and the
function-calling tools record through the same helpers."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from ..grading._rubric import Rubric
from ..models._failure import failure_line
from ..models._usage import Meter
from ._result import Iteration

__all__ = [
    "Generator",
    "HistorySink",
    "generator_task",
    "new_id",
    "record_lost",
    "record_selection",
    "record_shadows",
]


class Generator(Protocol):
    """Anything that can write a draft, and revise one on a list of issues."""

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str: ...


class HistorySink(Protocol):
    """What the loop needs of a history store (``HistoryStore`` provides it)."""

    def start_loop(
        self,
        loop_id: str,
        *,
        task: str,
        rubric: Mapping[str, Any],
        config: Mapping[str, Any],
        started_at: float | None = None,
    ) -> None: ...

    def add_iteration(self, loop_id: str, record: Mapping[str, Any]) -> None: ...

    def finish_loop(
        self,
        loop_id: str,
        *,
        final_output_id: str,
        passed: bool,
        stop_reason: str,
        total_time_ms: float,
        final_score: float | None,
    ) -> None: ...


def generator_task(task: str, rubric: Rubric) -> str:
    """The task text the generator sees: the task, then every criterion.

    Code-filled criteria are included on purpose: a criterion the generator never
    sees is one it keeps violating.
    """
    return (
        f"{task.rstrip()}\n\n"
        "Your answer will be checked against every criterion below. Meet all of them.\n"
        f"{rubric.criteria_block()}"
    )


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def record_selection(store: object, loop_id: str, selection: Any) -> None:
    """Store a pairwise selection, if there was one and the store keeps them."""
    add = getattr(store, "add_preference", None)
    if selection is None or add is None:
        return
    add(
        selection.preference.to_json() if selection.preference is not None else None,
        origin="loop",
        loop_id=loop_id,
        a_output_id=selection.a_output_id,
        b_output_id=selection.b_output_id,
        chosen_output_id=selection.chosen_output_id,
        reason=selection.reason,
        error=selection.error,
    )


def record_shadows(store: object, loop_id: str, it: Iteration) -> None:
    """Store the draft's shadow outcomes, if the store keeps them (a reused verdict's
    outcomes were stored with the draft they came from)."""
    add = getattr(store, "add_shadow_results", None)
    if it.evaluation is None or not it.evaluation.shadows or it.reused_from or add is None:
        return
    add(it.output_id, it.evaluation.shadows, loop_id=loop_id, origin="loop")


def record_lost(
    store: object, loop_id: str, meter: Meter, exc: BaseException | None = None
) -> None:
    """Add the calls in ``meter`` (a step that raised ``exc``) to the loop's history, if
    the store keeps such calls (``HistoryStore.add_loop_usage``); and why it failed,
    with what a cut-off draft had written (``HistoryStore.add_loop_failure``)."""
    add = getattr(store, "add_loop_usage", None)
    if add is not None and meter.records:
        add(loop_id, meter.usage.to_dict())
    keep = getattr(store, "add_loop_failure", None)
    if keep is not None and exc is not None and meter.records:
        keep(loop_id, failure_line(exc), getattr(exc, "text", None))
