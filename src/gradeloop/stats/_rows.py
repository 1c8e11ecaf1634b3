"""One graded draft as the statistics read it, from any of the shapes gradeloop writes.

A :class:`GradedRow` comes from an :class:`~gradeloop.Evaluation`, from a line of
``gradeloop grade --drafts --json`` output, or from a draft record of a stored
grading run (``HistoryStore.grading_run(...)["drafts"]``). Only what the figures
need is kept: per key whether it was met (None when it has no answer: not checked,
or an error), its 0-10 score, the judge's samples on it, and what each shadow said.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

__all__ = ["GradedRow", "KeyOutcome"]


@dataclass(frozen=True)
class KeyOutcome:
    """One key of one draft: met (None without an answer), its 0-10 score, and the
    judge's repeated samples on it (``votes``: met or not per sample; ``scores``: a
    scored key's sampled scores)."""

    met: bool | None
    score: float | None = None
    votes: tuple[bool, ...] = ()
    scores: tuple[float, ...] = ()


@dataclass(frozen=True)
class GradedRow:
    """One graded draft. ``accepted`` is None when grading it failed (a judge that
    never answered): such a draft is left out of the rates and counted apart."""

    id: str
    accepted: bool | None
    keys: Mapping[str, KeyOutcome] = field(default_factory=dict)
    overall: float | None = None
    task: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    shadows: Mapping[str, tuple[bool, bool]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, *, where: str = "a record") -> GradedRow:
        """A ``grade --drafts --json`` line or a stored run's draft record."""
        if not isinstance(data, Mapping):
            raise InputError(f"{where}: expected a JSON object of one graded draft")
        evaluation = data.get("evaluation", data) if "evaluation" in data else data
        ident = data.get("id", data.get("item_id", data.get("output_id")))
        if not isinstance(ident, str | int) or isinstance(ident, bool):
            raise InputError(f'{where}: no draft id ("id"); give `grade --drafts --json` output')
        task = str(data["task"]) if isinstance(data.get("task"), str) else ""
        metadata = data.get("metadata") if isinstance(data.get("metadata"), Mapping) else {}
        if evaluation is None or data.get("error") or data.get("judge_error"):
            keys = _keys(evaluation, where) if isinstance(evaluation, Mapping) else {}
            return cls(str(ident), None, keys, None, task, dict(metadata or {}))
        if not isinstance(evaluation, Mapping) or not isinstance(evaluation.get("passed"), bool):
            raise InputError(
                f'{where}: no "passed" (true/false); give `grade --drafts --json` output'
            )
        overall = evaluation.get("overall_score")
        return cls(
            str(ident),
            evaluation["passed"],
            _keys(evaluation, where),
            float(overall) if isinstance(overall, int | float) and _number(overall) else None,
            task,
            dict(metadata or {}),
            _shadows(evaluation),
        )

    @classmethod
    def from_evaluation(
        cls,
        evaluation: Any,
        *,
        id: str | None = None,
        task: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> GradedRow:
        """An :class:`~gradeloop.Evaluation` (its ``output_id`` unless ``id`` is given)."""
        data = evaluation.to_json()
        data["id"] = id if id is not None else data.get("output_id", "")
        data["task"] = task
        data["metadata"] = dict(metadata or {})
        return cls.from_json(data, where=f"draft {data['id']}")

    def cluster(self, name: str) -> str:
        """The value of metadata field ``name`` (``"task"`` falls back to the task text,
        ``"id"`` is the draft's own id); an InputError when the draft has none."""
        if name in self.metadata and self.metadata[name] is not None:
            value = self.metadata[name]
            return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        if name == "task" and self.task:
            return self.task
        if name == "id":
            return self.id
        raise InputError(
            f"draft {self.id} has no metadata field {name!r} to cluster by; give the "
            'field in each draft\'s "metadata" (or --cluster task / id)'
        )


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _keys(evaluation: Mapping[str, Any], where: str) -> dict[str, KeyOutcome]:
    criteria = evaluation.get("criteria")
    if not isinstance(criteria, list):
        raise InputError(f'{where}: no "criteria" list; give `grade --drafts --json` output')
    out: dict[str, KeyOutcome] = {}
    for c in criteria:
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            raise InputError(f'{where}: a criterion without a "name"')
        answered = c.get("status", "met" if c.get("passed") else "failed") in ("met", "failed")
        samples: list[Any] = c["samples"] if isinstance(c.get("samples"), list) else []
        score = c.get("score")
        out[c["name"]] = KeyOutcome(
            met=bool(c.get("passed")) if answered else None,
            score=float(score) if answered and isinstance(score, int | float) else None,
            votes=tuple(v for v in samples if isinstance(v, bool)) if answered else (),
            scores=tuple(float(v) for v in samples if _number(v)) if answered else (),
        )
    return out


def _shadows(evaluation: Mapping[str, Any]) -> dict[str, tuple[bool, bool]]:
    out: dict[str, tuple[bool, bool]] = {}
    for s in evaluation.get("shadows") or ():
        if not isinstance(s, Mapping) or not isinstance(s.get("key"), str):
            continue
        primary = (s.get("primary") or {}).get("passed")
        shadow = (s.get("shadow") or {}).get("passed")
        if isinstance(primary, bool) and isinstance(shadow, bool):
            out[s["key"]] = (primary, shadow)
    return out
