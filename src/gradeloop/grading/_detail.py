"""The full record of one evaluation, for the history and the reports.

Seed 003's evaluation JSON (:meth:`Evaluation.to_json`) has a fixed shape: per key
a name, weight, score and pass. A report also needs who filled each key, its
issues, and the judge's reasoning; :func:`detail_json` is that record. It is stored
beside the seed's JSON, never instead of it.
"""

from __future__ import annotations

from typing import Any

from ._grade import Evaluation

__all__ = ["detail_json"]


def detail_json(evaluation: Evaluation) -> dict[str, Any]:
    """Per key ``source``, ``filled_by``, ``met``, ``checked``, ``score`` and
    ``issues``; the merged verdict's ``reasoning`` and ``issues``; whether the
    judge was called."""
    return {
        "reasoning": evaluation.verdict.reasoning,
        "issues": list(evaluation.verdict.issues),
        "judge_called": evaluation.judge_called,
        "criteria": [
            {
                "key": c.key,
                "source": c.source,
                "filled_by": c.filled_by,
                "met": c.passed,
                "checked": c.checked,
                "score": round(c.score, 2),
                "issues": list(c.issues),
                **({"feedback": c.feedback} if c.feedback else {}),
                **(
                    {"agreement": round(c.agreement, 4), "samples": list(c.samples)}
                    if c.agreement is not None
                    else {}
                ),
                **({"judging": dict(c.judging)} if c.judging else {}),
            }
            for c in evaluation.criteria
        ],
    }
