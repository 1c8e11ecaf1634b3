"""The seed's four evaluation figures, computed over the stored loops."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Real
from typing import Any

__all__ = [
    "QUALITY_BASIS",
    "UNSTABLE_SPLIT",
    "compute_stats",
    "is_complete",
    "key_stability",
    "stability_from_rows",
    "stats_from_totals",
]

QUALITY_BASIS = (
    "mean of (last judged overall score - first judged overall score) / first * 100, "
    "over loops with at least 2 judged iterations and a first score above 0"
)


def is_complete(record: Mapping[str, Any]) -> bool:
    """Whether an iteration was fully logged.

    Complete means: the draft's ``content`` (a string), an ``output_id``, a numeric
    ``generation_time_ms``, a ``usage`` mapping, and either an ``evaluation`` or a
    ``judge_error`` -- the draft, its cost, and what became of it.
    """
    output_id = record.get("output_id")
    gen_time = record.get("generation_time_ms")
    judge_error = record.get("judge_error")
    return (
        isinstance(record.get("content"), str)
        and isinstance(output_id, str)
        and bool(output_id)
        and isinstance(gen_time, Real)
        and not isinstance(gen_time, bool)
        and isinstance(record.get("usage"), Mapping)
        and (
            isinstance(record.get("evaluation"), Mapping)
            or (isinstance(judge_error, str) and bool(judge_error))
        )
    )


def compute_stats(
    loops: Iterable[Mapping[str, Any]], iterations: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """The four figures from ``loops`` rows and ``iterations`` rows.

    ``loops`` rows hold ``loop_id``, ``passed``, ``stop_reason``, ``finished_at``;
    ``iterations`` rows hold ``loop_id``, ``overall_score`` (None when unjudged) and
    ``complete``, in iteration order within each loop.

    * ``iterations_to_pass``: mean number of iterations of the loops that passed;
    * ``quality_improvement``: see :data:`QUALITY_BASIS` (percent);
    * ``stagnation_exits``: loops that stopped with ``"stagnation"``, as a percent
      of finished loops;
    * ``history_completeness``: iterations that were completely logged (see
      :func:`is_complete`), as a percent of all iterations.

    Each figure's ``value`` is None when its denominator is zero.
    """
    loop_rows = list(loops)
    rounds: dict[str, int] = {}
    judged: dict[str, list[float]] = {}
    complete = total = 0
    for row in iterations:
        loop_id = str(row["loop_id"])
        rounds[loop_id] = rounds.get(loop_id, 0) + 1
        if row["overall_score"] is not None:
            judged.setdefault(loop_id, []).append(float(row["overall_score"]))
        total += 1
        complete += bool(row["complete"])
    finished = [r for r in loop_rows if r["finished_at"] is not None]
    passed = [rounds.get(str(r["loop_id"]), 0) for r in finished if r["passed"]]
    stagnated = sum(1 for r in finished if r["stop_reason"] == "stagnation")
    return {
        "loops": len(loop_rows),
        "iterations_to_pass": {
            "value": _mean(passed),
            "unit": "iterations",
            "loops_passed": len(passed),
        },
        "quality_improvement": _quality(judged.values()),
        "stagnation_exits": {
            "value": _percent(stagnated, len(finished)),
            "unit": "percent",
            "stagnation_loops": stagnated,
            "finished_loops": len(finished),
        },
        "history_completeness": {
            "value": _percent(complete, total),
            "unit": "percent",
            "complete_iterations": complete,
            "iterations": total,
        },
    }


def stats_from_totals(t: Mapping[str, Any]) -> dict[str, Any]:
    """The four figures from the running totals of the ``loop_totals`` row.

    The same figures as :func:`compute_stats` over every row, read from sums the
    database keeps as rounds are written (:mod:`gradeloop.history._rollup`).
    """
    passed, finished, gained = int(t["passed"]), int(t["finished"]), int(t["gain_loops"])
    return {
        "loops": int(t["loops"]),
        "iterations_to_pass": {
            "value": int(t["passed_rounds"]) / passed if passed else None,
            "unit": "iterations",
            "loops_passed": passed,
        },
        "quality_improvement": {
            "value": float(t["gain_sum"]) / gained if gained else None,
            "unit": "percent",
            "loops": gained,
            "excluded_zero_first_score": int(t["zero_start"]),
            "basis": QUALITY_BASIS,
        },
        "stagnation_exits": {
            "value": _percent(int(t["stagnated"]), finished),
            "unit": "percent",
            "stagnation_loops": int(t["stagnated"]),
            "finished_loops": finished,
        },
        "history_completeness": {
            "value": _percent(int(t["complete"]), int(t["iterations"])),
            "unit": "percent",
            "complete_iterations": int(t["complete"]),
            "iterations": int(t["iterations"]),
        },
    }


def _quality(trajectories: Iterable[list[float]]) -> dict[str, Any]:
    gains: list[float] = []
    zero_start = 0
    for scores in trajectories:
        if len(scores) < 2:
            continue
        if scores[0] <= 0:
            zero_start += 1  # a percentage of zero is undefined; counted, not used
            continue
        gains.append((scores[-1] - scores[0]) / scores[0] * 100.0)
    return {
        "value": _mean(gains),
        "unit": "percent",
        "loops": len(gains),
        "excluded_zero_first_score": zero_start,
        "basis": QUALITY_BASIS,
    }


def _mean(values: list[float] | list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _percent(part: int, whole: int) -> float | None:
    return part / whole * 100.0 if whole else None


#: A key whose samples split on at least this share of its sampled evaluations is unstable.
UNSTABLE_SPLIT = 0.2


def key_stability(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per judge key, how often repeated judging agreed with itself.

    ``records`` are stored iteration / graded-draft records; only keys judged with
    ``samples`` > 1 (those with an ``agreement`` in their detail) count. Per key:
    ``evaluations`` (sampled), ``mean_agreement``, ``split`` (the share of those
    evaluations where the samples did not all agree) and ``unstable`` (``split`` at
    least :data:`UNSTABLE_SPLIT`), sorted least stable first.
    """
    seen: dict[str, list[float]] = {}
    for record in records:
        detail = record.get("detail")
        if not isinstance(detail, Mapping):
            continue
        for c in detail.get("criteria") or ():
            agreement = c.get("agreement") if isinstance(c, Mapping) else None
            if isinstance(agreement, Real) and not isinstance(agreement, bool):
                seen.setdefault(str(c.get("key")), []).append(float(agreement))
    return _stability(
        (key, len(values), sum(values), sum(v < 1 for v in values)) for key, values in seen.items()
    )


def stability_from_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`key_stability` from the per-key sums the database keeps.

    ``rows`` are ``key_agreement`` rows (``key``, ``evaluations``, ``agreement_sum``,
    ``split``), kept by triggers as records are written (see
    :mod:`gradeloop.history._rollup`), so no record is read again.
    """
    return _stability(
        (str(r["key"]), int(r["evaluations"]), float(r["agreement_sum"]), int(r["split"]))
        for r in rows
        if int(r["evaluations"]) > 0
    )


def _stability(per_key: Iterable[tuple[str, int, float, int]]) -> dict[str, Any]:
    """The figures from (key, sampled evaluations, sum of agreements, how many split)."""
    keys: list[dict[str, Any]] = []
    for key, n, total, splits in per_key:
        split = splits / n
        keys.append(
            {
                "key": key,
                "evaluations": n,
                "mean_agreement": round(total / n, 4),
                "split": round(split, 4),
                "unstable": split >= UNSTABLE_SPLIT,
            }
        )
    keys.sort(key=lambda k: (-k["split"], k["mean_agreement"], k["key"]))
    return {"unstable_split": UNSTABLE_SPLIT, "keys": keys}
