"""A met rate corrected for the judge's errors (Rogan and Gladen 1978).

A judge that says "met" with true-positive rate TPR (on drafts people call met) and
true-negative rate TNR (on drafts people call not met) reports, on drafts whose true
met rate is p, an apparent rate q = p TPR + (1 - p)(1 - TNR). Solving for p:

    p = (q + TNR - 1) / (TPR + TNR - 1),  clipped to [0, 1].

The interval carries the uncertainty of all three estimates (q from the graded run,
TPR and TNR from the labels, three independent samples) by the delta method:

    Var(p) = [Var(q) + p^2 Var(TPR) + (1 - p)^2 Var(TNR)] / (TPR + TNR - 1)^2

with binomial variances, evaluated at the unclipped estimate; a normal interval
clipped to [0, 1]. When TPR + TNR <= 1 the
judge tells met from not met no better than a coin, and there is nothing to correct
with: the result says so instead of a number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ._dist import two_sided_z
from ._intervals import Interval, check_level

__all__ = ["CorrectedRate", "corrected_rate"]


@dataclass(frozen=True)
class CorrectedRate:
    """The corrected rate and its interval, with what went in; ``note`` says why
    there is no estimate when there is none."""

    interval: Interval
    observed: float | None
    tpr: float | None
    tnr: float | None
    note: str | None = None

    @property
    def rate(self) -> float | None:
        """The corrected rate (None when the judge is too weak or data are missing)."""
        return self.interval.estimate

    def to_json(self) -> dict[str, Any]:
        """``{"corrected_rate", "ci", "observed_rate", "tpr", "tnr", "level"}`` (+ note)."""
        r = self.interval
        out: dict[str, Any] = {
            "corrected_rate": None if r.estimate is None else round(r.estimate, 4),
            "ci": None if r.ci is None else [round(x, 4) for x in r.ci],
            "observed_rate": _r(self.observed),
            "tpr": _r(self.tpr),
            "tnr": _r(self.tnr),
            "level": r.level,
        }
        if self.note:
            out["note"] = self.note
        return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def corrected_rate(
    met: int,
    n: int,
    *,
    true_positive: int,
    positives: int,
    true_negative: int,
    negatives: int,
    level: float = 0.95,
) -> CorrectedRate:
    """Rogan-Gladen: ``met`` of ``n`` drafts judged met, a judge that said met on
    ``true_positive`` of ``positives`` drafts people call met and not met on
    ``true_negative`` of ``negatives`` drafts people call not met."""
    check_level(level)
    none = Interval(None, None, None, level, n, "rogan-gladen")
    q = met / n if n > 0 else None
    tpr = true_positive / positives if positives > 0 else None
    tnr = true_negative / negatives if negatives > 0 else None
    if q is None or tpr is None or tnr is None:
        missing = (
            "graded drafts"
            if q is None
            else "labels people call met"
            if tpr is None
            else ("labels people call not met")
        )
        return CorrectedRate(none, q, tpr, tnr, f"no correction: no {missing}")
    youden = tpr + tnr - 1
    if youden <= 0:
        return CorrectedRate(
            none, q, tpr, tnr,
            f"no correction: the judge is too weak (TPR + TNR = {tpr + tnr:.2f} <= 1, no "
            "better than chance at telling met from not met)",
        )  # fmt: skip
    raw = (q + tnr - 1) / youden
    p = min(1.0, max(0.0, raw))
    var = (
        q * (1 - q) / n
        + raw * raw * tpr * (1 - tpr) / positives
        + (1 - raw) ** 2 * tnr * (1 - tnr) / negatives
    ) / (youden * youden)
    half = two_sided_z(level) * math.sqrt(var)  # around the unclipped estimate, then clipped
    low, high = max(0.0, min(1.0, raw - half)), min(1.0, max(0.0, raw + half))
    interval = Interval(p, low, high, level, n, "rogan-gladen")
    return CorrectedRate(interval, q, tpr, tnr)
