"""Turning stored rows into the seed's history JSON."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..loop._best import best_of

__all__ = [
    "history_json",
    "judged_passed",
    "judged_score",
    "pack_usage",
    "pid_alive",
    "unpack_usage",
]

_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
_PARTS = ("generation_usage", "evaluation_usage")


def _compact(value: Any) -> dict[str, Any] | None:
    """A usage mapping without its derived ``total_input``; None if it is not one.

    Only the four counts, the derived total and ``cost_usd`` may be in it, and the
    total must be what the counts give: anything else is stored as it came.
    """
    if not isinstance(value, Mapping) or not set(value) <= {*_COUNTS, "total_input", "cost_usd"}:
        return None
    counts = [value.get(k) for k in _COUNTS]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in counts):
        return None
    out = {k: value[k] for k in value if k != "total_input"}
    return out if dict(value) == _full(out) else None


def _full(compact: Mapping[str, Any]) -> dict[str, Any]:
    """The usage dict as ``Usage.to_dict()`` writes it (``total_input`` last)."""
    total = sum(compact[k] for k in _COUNTS if k != "output_tokens")
    return {**compact, "total_input": total}


def _added(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any] | None:
    """The compact sum of two compact usages, as ``Usage.__add__`` makes it."""
    out: dict[str, Any] = {k: a[k] + b[k] for k in _COUNTS}
    if ("cost_usd" in a) != ("cost_usd" in b):
        return None
    if "cost_usd" in a:
        known = a["cost_usd"] is not None and b["cost_usd"] is not None
        out["cost_usd"] = round(a["cost_usd"] + b["cost_usd"], 8) if known else None
    return out


def pack_usage(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` as stored: each call's usage once.

    A loop record carries ``generation_usage``, ``evaluation_usage`` and their sum
    ``usage``, each with a derived ``total_input``: the same counts three times
    over. When the sum and the totals are exactly what the parts give, only the
    parts' own figures are stored; :func:`unpack_usage` puts the rest back. Any
    other record is stored as it is.
    """
    gen, ev = (_compact(record.get(name)) for name in _PARTS)
    whole = record.get("usage")
    if gen is None or ev is None or not isinstance(whole, Mapping):
        return dict(record)
    total = _added(gen, ev)
    if total is None or dict(whole) != _full(total):
        return dict(record)
    packed = {k: v for k, v in record.items() if k != "usage"}
    packed[_PARTS[0]], packed[_PARTS[1]] = gen, ev
    return packed


def unpack_usage(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record with its ``usage`` and the parts' ``total_input`` put back."""
    if "usage" in record or not all(isinstance(record.get(n), Mapping) for n in _PARTS):
        return record  # stored whole (an older file, or a record of another shape)
    gen, ev = record[_PARTS[0]], record[_PARTS[1]]
    total = _added(gen, ev)
    if total is None or not all(isinstance(gen.get(k), int) for k in _COUNTS):
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == _PARTS[0]:
            out["usage"] = _full(total)  # where Iteration.to_record() puts it
            out[key] = _full(gen)
        elif key == _PARTS[1]:
            out[key] = _full(ev)
        else:
            out[key] = value
    return out


def judged_score(record: Mapping[str, Any]) -> float | None:
    """The overall score a record's draft was judged at, or None if it was not judged.

    A record with a ``judge_error`` counts as unjudged even if an evaluation rides
    along: the draft's own verdict is what failed, so it has no score.
    """
    if record.get("judge_error") is not None:
        return None
    evaluation = record.get("evaluation")
    if not isinstance(evaluation, Mapping):
        return None
    score = evaluation.get("overall_score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None
    return float(score)


def judged_passed(record: Mapping[str, Any]) -> bool:
    """Whether the record's own verdict passed; never True for a failed judgement."""
    evaluation = record.get("evaluation")
    return (
        record.get("judge_error") is None
        and isinstance(evaluation, Mapping)
        and evaluation.get("passed") is True
    )


def history_json(
    loop: Mapping[str, Any], records: Sequence[tuple[dict[str, Any], float]], status: str
) -> dict[str, Any]:
    """The history JSON of one loop.

    ``loop`` is its ``loops`` row; ``records`` its iteration records in order, each
    with the epoch time it was recorded at; ``status`` from the writer's liveness.
    """
    finished = status == "finished"
    scores = [judged_score(rec) for rec, _ in records]
    if finished:
        final_output_id = loop["final_output_id"]
        total_time_ms = float(loop["total_time_ms"])
    else:
        final_output_id = _best_so_far([rec for rec, _ in records], scores)
        last_at = records[-1][1] if records else float(loop["started_at"])
        total_time_ms = max(0.0, (last_at - float(loop["started_at"])) * 1000.0)
    out = {
        "loop_id": loop["loop_id"],
        "iterations": [_entry(rec) for rec, _ in records],
        "final_output_id": final_output_id,
        "total_time_ms": total_time_ms,
        "improvement_trajectory": [s for s in scores if s is not None],
        "task": loop["task"],
        "status": status,
        "stop_reason": loop["stop_reason"] if finished else None,
        "passed": bool(loop["passed"]) if finished else False,
        "final_score": loop["final_score"] if finished else None,
        "started_at": float(loop["started_at"]),
    }
    unrounded = _unrounded(loop)
    if unrounded is not None:  # the calls that belong to no round (a generate that raised)
        out["unrounded_usage"] = unrounded
    return out


def _unrounded(loop: Mapping[str, Any]) -> dict[str, Any] | None:
    raw = loop.get("unrounded_json")
    if not raw:
        return None
    value = json.loads(raw)
    return value if isinstance(value, dict) else None


def _entry(record: Mapping[str, Any]) -> dict[str, Any]:
    evaluation: dict[str, Any] = {
        "overall_score": judged_score(record),
        "passed": judged_passed(record),
    }
    if record.get("judge_error") is not None:
        evaluation["error"] = str(record["judge_error"])
    entry: dict[str, Any] = {
        "output_id": record.get("output_id"),
        "content": record.get("content"),
        "evaluation": evaluation,
    }
    if record.get("feedback"):
        entry["feedback"] = record["feedback"]
    return entry


def _best_so_far(records: Sequence[Mapping[str, Any]], scores: Sequence[float | None]) -> Any:
    """The output id the "best" return policy would pick now (see loop/_best.py)."""
    ranked = list(zip(records, scores, strict=True))
    best = best_of(ranked, lambda rs: None if rs[1] is None else (judged_passed(rs[0]), rs[1]))
    if best is not None:
        return best[0].get("output_id")
    return records[-1].get("output_id") if records else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this id is running on this machine."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)  # signal 0: existence check only, nothing is delivered
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import ctypes

    def _windows_pid_alive(pid: int) -> bool:
        # os.kill(pid, 0) would send CTRL_C_EVENT on Windows, so ask the kernel instead.
        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFORMATION
        if not handle:
            return kernel32.GetLastError() == 5  # access denied: it exists
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return False
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)

else:

    def _windows_pid_alive(pid: int) -> bool:
        return False
