"""How far two raters agree: agreement rate, Cohen's kappa, MAE and correlation.

The raters are any two sources of answers on the same items: a checker and the
judge (``gradeloop compare``), or the judge and people (``gradeloop calibrate``).

Undefined figures are ``None`` with a note saying why, never a made-up number:

* kappa with no items, or when both raters put every item in the same class
  (chance agreement is then 100% and kappa is 0/0). When only one rater is
  constant, kappa is defined and is exactly 0 whatever the agreement; a note says
  so, since a reader would otherwise take it for "no better than chance".
* correlation with fewer than two items, or when either rater gave every item
  the same score (zero variance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..stats import kappa_interval, wilson

__all__ = [
    "Confusion",
    "PassFailStats",
    "ScoreStats",
    "agreement_rate",
    "cohen_kappa",
    "confusion",
    "mean_absolute_error",
    "pass_fail_stats",
    "pearson",
    "score_stats",
]


@dataclass(frozen=True)
class Confusion:
    """The 2x2 table of rater A against rater B on pass/fail answers."""

    both_pass: int = 0
    both_fail: int = 0
    a_pass_b_fail: int = 0
    a_fail_b_pass: int = 0

    @property
    def n(self) -> int:
        """Items in the table."""
        return self.both_pass + self.both_fail + self.a_pass_b_fail + self.a_fail_b_pass

    @property
    def agreements(self) -> int:
        """Items on which the raters agree."""
        return self.both_pass + self.both_fail


def confusion(a: Sequence[bool], b: Sequence[bool]) -> Confusion:
    """Count the four cells; ``a`` and ``b`` are paired item by item."""
    _same_length(a, b)
    cells = [0, 0, 0, 0]
    for x, y in zip(a, b, strict=True):
        cells[(0 if x == y else 2) + (0 if x else 1)] += 1
    return Confusion(cells[0], cells[1], cells[2], cells[3])


def agreement_rate(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """The share of items on which the raters agree (0-1); None with no items."""
    table = confusion(a, b)
    return table.agreements / table.n if table.n else None


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> tuple[float | None, str | None]:
    """Cohen's kappa for two raters' pass/fail answers, and a note when it needs one.

    ``kappa = (po - pe) / (1 - pe)`` with ``po`` the observed agreement and ``pe``
    the agreement expected by chance from each rater's own pass rate. Computed
    with exact fractions, so the degenerate cases are recognised exactly.
    """
    return _kappa(confusion(a, b))


def _kappa(t: Confusion) -> tuple[float | None, str | None]:
    n = t.n
    if n == 0:
        return None, "kappa undefined: no items were rated by both"
    pa = Fraction(t.both_pass + t.a_pass_b_fail, n)
    pb = Fraction(t.both_pass + t.a_fail_b_pass, n)
    pe = pa * pb + (1 - pa) * (1 - pb)
    if pe == 1:
        return None, (
            "kappa undefined: both gave every item the same answer, so chance "
            "agreement is 100%; read the agreement rate alone"
        )
    po = Fraction(t.agreements, n)
    kappa = float((po - pe) / (1 - pe))
    if pa in (0, 1) or pb in (0, 1):
        return kappa, (
            "one side gave every item the same answer, so kappa is 0 whatever "
            "the agreement; include items that should pass and items that should fail"
        )
    return kappa, None


def mean_absolute_error(x: Sequence[float], y: Sequence[float]) -> float | None:
    """The mean of ``|x - y|`` over paired items; None with no items."""
    _same_length(x, y)
    if not x:
        return None
    return sum(abs(p - q) for p, q in zip(x, y, strict=True)) / len(x)


def pearson(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, str | None]:
    """Pearson's correlation of paired scores, and a note when it is undefined."""
    _same_length(x, y)
    n = len(x)
    if n < 2:
        return None, "correlation undefined: it needs at least 2 items"
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((p - mx) ** 2 for p in x)
    syy = sum((q - my) ** 2 for q in y)
    if sxx == 0 or syy == 0:
        return None, "correlation undefined: one side gave every item the same score"
    sxy = sum((p - mx) * (q - my) for p, q in zip(x, y, strict=True))
    r = sxy / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r)), None  # rounding can step just past +-1


@dataclass(frozen=True)
class PassFailStats:
    """Agreement, kappa and the confusion table of two raters' pass/fail answers."""

    table: Confusion
    agreement: float | None
    kappa: float | None
    kappa_note: str | None = None

    @property
    def n(self) -> int:
        """Items both raters answered."""
        return self.table.n

    def swapped(self) -> PassFailStats:
        """The same figures with raters A and B exchanged (kappa is symmetric)."""
        t = self.table
        table = Confusion(t.both_pass, t.both_fail, t.a_fail_b_pass, t.a_pass_b_fail)
        return PassFailStats(table, self.agreement, self.kappa, self.kappa_note)

    def to_json(self, a: str = "a", b: str = "b") -> dict[str, Any]:
        """JSON-ready; the two disagreement cells are named ``{a}_pass_{b}_fail`` etc.;
        ``agreement_ci`` and ``kappa_ci`` are 95 % intervals (Wilson; Fleiss, Cohen and
        Everitt)."""
        t = self.table
        out: dict[str, Any] = {
            "n": t.n,
            "agreement": _r(self.agreement),
            "kappa": _r(self.kappa),
            "confusion": {
                "both_pass": t.both_pass,
                "both_fail": t.both_fail,
                f"{a}_pass_{b}_fail": t.a_pass_b_fail,
                f"{a}_fail_{b}_pass": t.a_fail_b_pass,
            },
        }
        # 95 % intervals: Wilson on the agreement, the large-sample one on kappa
        out["agreement_ci"] = wilson(t.agreements, t.n).to_json()["ci"]
        cells = (t.both_pass, t.both_fail, t.a_pass_b_fail, t.a_fail_b_pass)
        out["kappa_ci"] = kappa_interval(*cells).to_json()["ci"] if self.kappa is not None else None
        if self.kappa_note:
            out["kappa_note"] = self.kappa_note
        return out


def pass_fail_stats(a: Sequence[bool], b: Sequence[bool]) -> PassFailStats:
    """Every pass/fail figure for two raters at once."""
    table = confusion(a, b)
    kappa, note = _kappa(table)
    return PassFailStats(table, table.agreements / table.n if table.n else None, kappa, note)


@dataclass(frozen=True)
class ScoreStats:
    """Mean absolute error and correlation of two raters' scores."""

    n: int
    mae: float | None
    correlation: float | None
    correlation_note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, figures rounded to 4 places."""
        out: dict[str, Any] = {
            "n": self.n,
            "mae": _r(self.mae),
            "correlation": _r(self.correlation),
        }
        if self.correlation_note:
            out["correlation_note"] = self.correlation_note
        return out


def score_stats(x: Sequence[float], y: Sequence[float]) -> ScoreStats:
    """Every score figure for two raters at once."""
    r, note = pearson(x, y)
    return ScoreStats(len(x), mean_absolute_error(x, y), r, note)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _same_length(a: Sequence[Any], b: Sequence[Any]) -> None:
    if len(a) != len(b):
        raise ValueError(f"the raters answered {len(a)} and {len(b)} items; pair them first")
