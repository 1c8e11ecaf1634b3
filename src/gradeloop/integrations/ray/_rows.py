"""The columns a graded batch gains: one row's values from its Evaluation, and their
types for each engine (an Arrow schema, a Spark DDL string, an empty pandas frame).

Per-key values are structs keyed by the rubric's keys (``criteria_met.tone``), so a
Parquet file keeps each key in a column of its own and a query reads only the keys
it asks about. In pandas (and Ray's numpy batches) a struct is a dict per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...grading._jsonout import dumps
from ...grading._results import Evaluation
from ...grading._rubric import Rubric

__all__ = ["COLUMNS", "arrow_schema", "empty_frame", "row_of", "spark_ddl"]

# The columns GradeBatch adds, in order; ``shadows`` only when the rubric has any.
COLUMNS = (
    "accepted",
    "criteria_met",
    "scores",
    "issues",
    "status",
    "overall_score",
    "judge_error",
    "judge_requests",
    "judge_cached",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "reused",
    "run_id",
    "evaluation",
)


def row_of(evaluation: Evaluation, run_id: str, *, reused: bool = False) -> dict[str, Any]:
    """One row's added values. ``reused``: the row's result is another row's of the
    same batch (an identical draft, graded once): it sent nothing and spent nothing."""
    calls = evaluation.judge_calls
    usage = None if reused or not calls else evaluation.judge_usage
    sent = 0 if reused else sum(1 for c in calls if not getattr(c, "cached", False))
    met, scores, issues, status = {}, {}, {}, {}
    for c in evaluation.criteria:  # one pass: this runs for every draft
        met[c.key], scores[c.key] = c.passed, float(c.score)
        issues[c.key], status[c.key] = list(c.issues), c.status
    row: dict[str, Any] = {
        "accepted": evaluation.accepted,
        "criteria_met": met,
        "scores": scores,
        "issues": issues,
        "status": status,
        "overall_score": evaluation.overall_score,
        "judge_error": evaluation.judge_error,
        "judge_requests": sent,
        "judge_cached": evaluation.judge_cached,
        "input_tokens": 0 if usage is None else usage.total_input,
        "output_tokens": 0 if usage is None else usage.output_tokens,
        # no call, nothing spent; a call whose price is unknown: unknown
        "cost_usd": 0.0 if reused or not calls else (None if usage is None else usage.cost_usd),
        "reused": reused,
        "run_id": run_id,
        "evaluation": dumps(evaluation.to_json()),
    }
    if evaluation.shadows:
        row["shadows"] = {
            s.key: {"status": s.status, "primary": s.primary.passed, "shadow": s.shadow.passed}
            for s in evaluation.shadows
        }
    return row


def shadow_keys(rubric: Rubric) -> tuple[str, ...]:
    """The keys a rubric shadows (each has a ``shadows`` entry per row)."""
    return tuple(c.key for c in rubric.shadowed)


def arrow_schema(rubric: Rubric) -> Any:
    """The Arrow types of the added columns (a ``pyarrow.Schema``)."""
    import pyarrow as pa

    keys = rubric.keys

    def per_key(kind: Any, names: Sequence[str] = keys) -> Any:
        return pa.struct([pa.field(k, kind) for k in names])

    fields = [
        ("accepted", pa.bool_()),
        ("criteria_met", per_key(pa.bool_())),
        ("scores", per_key(pa.float64())),
        ("issues", per_key(pa.list_(pa.string()))),
        ("status", per_key(pa.string())),
        ("overall_score", pa.float64()),
        ("judge_error", pa.string()),
        ("judge_requests", pa.int64()),
        ("judge_cached", pa.bool_()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("cost_usd", pa.float64()),
        ("reused", pa.bool_()),
        ("run_id", pa.string()),
        ("evaluation", pa.string()),
    ]
    if shadowed := shadow_keys(rubric):
        side = pa.struct([("status", pa.string()), ("primary", pa.bool_()), ("shadow", pa.bool_())])
        fields.append(("shadows", per_key(side, shadowed)))
    return pa.schema(fields)


def spark_ddl(rubric: Rubric) -> str:
    """The added columns as a Spark DDL string, to append to the input's own schema
    for ``mapInPandas`` (keys are quoted with backticks)."""
    keys = rubric.keys

    def per_key(kind: str, names: Sequence[str] = keys) -> str:
        return "struct<" + ", ".join(f"`{k}`: {kind}" for k in names) + ">"

    parts = [
        "accepted boolean",
        f"criteria_met {per_key('boolean')}",
        f"scores {per_key('double')}",
        f"issues {per_key('array<string>')}",
        f"status {per_key('string')}",
        "overall_score double",
        "judge_error string",
        "judge_requests bigint",
        "judge_cached boolean",
        "input_tokens bigint",
        "output_tokens bigint",
        "cost_usd double",
        "reused boolean",
        "run_id string",
        "evaluation string",
    ]
    if shadowed := shadow_keys(rubric):
        side = "struct<status: string, primary: boolean, shadow: boolean>"
        parts.append(f"shadows {per_key(side, shadowed)}")
    return ", ".join(parts)


def empty_frame(rubric: Rubric, like: Any) -> Any:
    """An empty pandas frame with ``like``'s columns and the added ones: the
    ``meta`` Dask's ``map_partitions`` needs to know what it will get."""
    import pandas as pd

    frame = like.iloc[:0].copy()
    types = {
        "accepted": "bool",
        "overall_score": "float64",
        "judge_requests": "int64",
        "judge_cached": "bool",
        "input_tokens": "int64",
        "output_tokens": "int64",
        "cost_usd": "float64",
        "reused": "bool",
    }
    names = [*COLUMNS, *(("shadows",) if shadow_keys(rubric) else ())]
    for name in names:
        frame[name] = pd.Series([], dtype=types.get(name, "object"))
    return frame
