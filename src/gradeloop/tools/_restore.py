"""Reading a tool-driven loop back from the history store.

The ledger keeps only recent loops in memory; any other loop (one it let go, or one
a previous server process started) is rebuilt here from its ``loops`` row, its
iteration records and its ``tool_outputs`` rows. A recorded output gets back its
evaluation as it was stored (scores at the two decimals the record keeps); an output
still pending gets back its text and generation figures.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..errors import GradeloopError, HistoryError, LoopNotFoundError
from ..grading._grade import CriterionResult, Evaluation
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._verdict import Verdict
from ..history._store import HistoryStore
from ..loop._result import Iteration
from ..models._usage import Usage
from ._state import LoopState, Output

__all__ = ["load_loop"]


def load_loop(store: HistoryStore, loop_id: str, registry: Registry | None) -> LoopState | None:
    """The tool-driven loop ``loop_id`` as the store has it; None if it is not one."""
    rows = store.tool_outputs(loop_id)
    if not rows:
        return None
    try:
        data = store.get(loop_id)
        settings = store.loop_settings(loop_id)
        records = {str(r.get("output_id")): r for r in store.iterations(loop_id)}
        rubric = Rubric.from_dict(settings["rubric"], registry=registry)
    except LoopNotFoundError:
        return None
    except GradeloopError as exc:
        raise HistoryError(f"loop {loop_id} cannot be read back from the history: {exc}") from exc
    loop = LoopState(loop_id, str(data.get("task") or ""), rubric)
    loop.started = time.perf_counter() - max(0.0, time.time() - float(data["started_at"]))
    if data.get("status") == "finished":
        loop.stop_reason = data.get("stop_reason")
        loop.final_output_id = data.get("final_output_id")
    by_id: dict[str, Output] = {}
    for row in rows:
        record = records.get(row["output_id"])
        it = _iteration(row, record)
        parent = by_id.get(str(row["parent_id"])) if row["parent_id"] else None
        out = Output(loop, it, row["source"], parent, row["revision_feedback"])
        out.recorded = record is not None
        loop.outputs.append(out)
        by_id[out.output_id] = out
    return loop


def _iteration(row: Mapping[str, Any], record: Mapping[str, Any] | None) -> Iteration:
    source = record if record is not None else (row["pending"] or {})
    it = Iteration(
        iteration=int(row["iteration"]),
        output_id=str(row["output_id"]),
        content=str(source.get("content", "")),
        generation_time_ms=float(source.get("generation_time_ms") or 0.0),
        generation_usage=_usage(source.get("generation_usage")),
    )
    if record is not None:
        it.evaluation = _evaluation(record)
        it.judge_error = record.get("judge_error")
        it.feedback = record.get("feedback")
        it.evaluation_time_ms = record.get("evaluation_time_ms")
        it.evaluation_usage = _usage(record.get("evaluation_usage"))
    return it


def _usage(data: Any) -> Usage:
    return Usage.from_dict(data)


def _evaluation(record: Mapping[str, Any]) -> Evaluation | None:
    """The stored evaluation (the seed's JSON plus the detail record), rebuilt."""
    ev, detail = record.get("evaluation"), record.get("detail") or {}
    if not isinstance(ev, Mapping) or record.get("judge_error") is not None:
        return None
    more = {c.get("key"): c for c in detail.get("criteria") or [] if isinstance(c, Mapping)}
    criteria = []
    for c in ev.get("criteria") or []:
        extra = more.get(c.get("name"), {})
        criteria.append(
            CriterionResult(
                key=str(c.get("name")),
                weight=float(c.get("weight", 1.0)),
                score=float(c.get("score", 0.0)),
                passed=bool(c.get("passed")),
                source="code" if extra.get("source") == "code" else "judge",
                filled_by=str(extra.get("filled_by", "judge")),
                issues=tuple(extra.get("issues") or ()),
                feedback=c.get("feedback"),
                checked=bool(extra.get("checked", True)),
            )
        )
    accepted = bool(ev.get("passed"))
    verdict = Verdict(
        reasoning=str(detail.get("reasoning") or ""),
        criteria_met={c.key: c.passed for c in criteria},
        passed=accepted,
        issues=[str(i) for i in detail.get("issues") or []],
    )
    return Evaluation(
        verdict=verdict,
        accepted=accepted,
        criteria=tuple(criteria),
        overall_score=float(ev.get("overall_score") or 0.0),
        output_id=str(record.get("output_id")),
        improvement_from_previous=ev.get("improvement_from_previous"),
        judge_called=bool(detail.get("judge_called")),
    )
