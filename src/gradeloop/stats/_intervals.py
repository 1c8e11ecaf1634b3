"""Confidence intervals: Wilson for rates, Student's t for means, cluster-robust
versions of both, Cohen's kappa with its asymptotic interval.

Sums arrive as exact numbers (:class:`fractions.Fraction` or ``int``) from
:class:`~gradeloop.stats.RunTally`, so a variance is computed without cancellation
and only its square root is a float. Every formula is the textbook one its oracle
implements (see docs/statistics.md); the tests hold each to ``scipy.stats`` or
``statsmodels`` within 1e-9.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ._dist import normal_quantile, t_quantile, two_sided_z

__all__ = [
    "Interval",
    "check_level",
    "clustered_mean",
    "clustered_rate",
    "kappa_interval",
    "mean_from_moments",
    "rate_from_moments",
    "t_interval",
    "wilson",
]

Number = int | float | Fraction


@dataclass(frozen=True)
class Interval:
    """An estimate and its confidence interval at ``level`` (both ends None when the
    data cannot give one, e.g. no observations, or one value for a t interval).

    ``n`` is the number of observations behind it, ``method`` how it was computed
    (``"wilson"``, ``"t"``, ``"wilson-clustered"``, ``"t-clustered"``, ...), and
    ``clusters`` the number of clusters when the interval is cluster-robust.
    """

    estimate: float | None
    low: float | None
    high: float | None
    level: float
    n: int
    method: str
    clusters: int | None = None

    @property
    def ci(self) -> list[float] | None:
        """``[low, high]``, or None when there is no interval."""
        if self.low is None or self.high is None:
            return None
        return [self.low, self.high]

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval (ends included)."""
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    def to_json(self, name: str = "rate", digits: int = 4) -> dict[str, Any]:
        """``{name: estimate, "ci": [lo, hi], "n": n}`` (rounded), plus ``"clusters"``
        when cluster-robust."""
        out: dict[str, Any] = {
            name: _round(self.estimate, digits),
            "ci": None if self.ci is None else [_round(x, digits) for x in self.ci],
            "n": self.n,
        }
        if self.clusters is not None:
            out["clusters"] = self.clusters
        return out


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def check_level(level: float) -> float:
    """``level`` itself when 0 < level < 1; else a ValueError that says so."""
    if not (isinstance(level, int | float) and 0.0 < level < 1.0):
        raise ValueError(f"a confidence level is between 0 and 1 (e.g. 0.95), not {level!r}")
    return float(level)


def _wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    # the interval always holds p (exactly 0 at 0, 1 at 1); rounding must not say otherwise
    return max(0.0, min(p, center - half)), min(1.0, max(p, center + half))


def wilson(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson's score interval for a rate of ``successes`` in ``n`` (never Wald's:
    it stays inside [0, 1] and keeps its coverage near 0 and 1)."""
    check_level(level)
    if n <= 0:
        return Interval(None, None, None, level, 0, "wilson")
    p = successes / n
    low, high = _wilson_bounds(p, n, two_sided_z(level))
    return Interval(p, low, high, level, n, "wilson")


def t_interval(n: int, total: Number, squares: Number, level: float = 0.95) -> Interval:
    """Student's t interval for a mean, from the count, sum and sum of squares.

    No interval below two values; zero spread gives the point itself.
    """
    check_level(level)
    if n <= 0:
        return Interval(None, None, None, level, 0, "t")
    mean = Fraction(total) / n
    if n == 1:
        return Interval(float(mean), None, None, level, 1, "t")
    var = max(Fraction(0), (Fraction(squares) - Fraction(total) * mean) / (n - 1))
    half = t_quantile(0.5 + level / 2, n - 1) * math.sqrt(var / n)
    m = float(mean)
    return Interval(m, m - half, m + half, level, n, "t")


def _moments(clusters: Sequence[tuple[Number, Number]]) -> tuple[Fraction, Fraction, Fraction]:
    """Sums over clusters of total^2, total * size and size^2."""
    tt = sum((Fraction(t) ** 2 for t, _ in clusters), Fraction(0))
    tm = sum((Fraction(t) * Fraction(m) for t, m in clusters), Fraction(0))
    mm = sum((Fraction(m) ** 2 for _, m in clusters), Fraction(0))
    return tt, tm, mm


def _cluster_variance(
    estimate: Fraction, n: Number, g: int, moments: tuple[Number, Number, Number]
) -> Fraction:
    """The cluster-robust (sandwich) variance of a ratio-of-totals mean, from the
    clusters' moments: sum of (total - estimate * size)^2, with the usual G / (G - 1)
    small-sample factor."""
    tt, tm, mm = (Fraction(x) for x in moments)
    spread = max(Fraction(0), tt - 2 * estimate * tm + estimate * estimate * mm)
    return Fraction(g, g - 1) * spread / (Fraction(n) ** 2)


def clustered_mean(clusters: Sequence[tuple[Number, int]], level: float = 0.95) -> Interval:
    """A mean with a cluster-robust interval: ``clusters`` holds each cluster's (sum,
    count); Student's t on G - 1 degrees of freedom (what statsmodels' OLS gives with
    ``cov_type="cluster"`` and ``use_t=True``)."""
    kept = [(t, m) for t, m in clusters if m > 0]
    total = sum((Fraction(t) for t, _ in kept), Fraction(0))
    n = sum(m for _, m in kept)
    return mean_from_moments(total, n, len(kept), _moments(kept), level)


def mean_from_moments(
    total: Number, n: int, g: int, moments: tuple[Number, Number, Number], level: float = 0.95
) -> Interval:
    """:func:`clustered_mean` from the clusters' totals: the grand total, the count, the
    number of clusters and their moments (sums of total^2, total * size, size^2)."""
    check_level(level)
    if n == 0:
        return Interval(None, None, None, level, 0, "t-clustered", clusters=g)
    mean = Fraction(total) / n
    if g < 2:
        return Interval(float(mean), None, None, level, n, "t-clustered", clusters=g)
    se = math.sqrt(_cluster_variance(mean, n, g, moments))
    half = t_quantile(0.5 + level / 2, g - 1) * se
    m = float(mean)
    return Interval(m, m - half, m + half, level, n, "t-clustered", clusters=g)


def clustered_rate(clusters: Sequence[tuple[int, int]], level: float = 0.95) -> Interval:
    """A rate with a cluster-robust interval: ``clusters`` holds each cluster's
    (successes, trials).

    Wilson's interval on the effective sample size ``p (1 - p) / V`` (V the
    cluster-robust variance), with Student's t on G - 1 degrees of freedom in place
    of the normal quantile; the effective size is capped at the number of trials
    (never narrower than Wilson's), and when V is 0 because every trial came out
    alike it is the number of clusters (nothing tells how alike a cluster's trials
    are, so each cluster counts once).
    """
    kept = [(s, m) for s, m in clusters if m > 0]
    successes = sum(s for s, _ in kept)
    n = sum(m for _, m in kept)
    return rate_from_moments(successes, n, len(kept), _moments(kept), level)


def rate_from_moments(
    successes: int, n: int, g: int, moments: tuple[Number, Number, Number], level: float = 0.95
) -> Interval:
    """:func:`clustered_rate` from the clusters' totals: successes, trials, the number
    of clusters and their moments (sums of successes^2, successes * trials, trials^2)."""
    check_level(level)
    if n == 0:
        return Interval(None, None, None, level, 0, "wilson-clustered", clusters=g)
    rate = Fraction(successes, n)
    p = float(rate)
    if g < 2:
        return Interval(p, None, None, level, n, "wilson-clustered", clusters=g)
    var = _cluster_variance(rate, n, g, moments)
    if var == 0:
        n_eff = float(g) if rate in (0, 1) else float(n)
    else:
        n_eff = min(float(n), float(rate * (1 - rate) / var))
    low, high = _wilson_bounds(p, n_eff, t_quantile(0.5 + level / 2, g - 1))
    return Interval(p, low, high, level, n, "wilson-clustered", clusters=g)


def kappa_interval(
    both_pass: int, both_fail: int, a_pass_b_fail: int, a_fail_b_pass: int, level: float = 0.95
) -> Interval:
    """Cohen's kappa for a 2x2 table of two raters, with the large-sample interval of
    Fleiss, Cohen and Everitt (1969), clipped to [-1, 1] (statsmodels'
    ``cohens_kappa``). No estimate when chance agreement is 100 %."""
    check_level(level)
    n = both_pass + both_fail + a_pass_b_fail + a_fail_b_pass
    if n == 0:
        return Interval(None, None, None, level, 0, "kappa")
    cells = [
        [Fraction(both_pass, n), Fraction(a_pass_b_fail, n)],
        [Fraction(a_fail_b_pass, n), Fraction(both_fail, n)],
    ]
    row = [cells[0][0] + cells[0][1], cells[1][0] + cells[1][1]]  # rater A: pass, fail
    col = [cells[0][0] + cells[1][0], cells[0][1] + cells[1][1]]  # rater B
    expected = row[0] * col[0] + row[1] * col[1]
    if expected == 1:
        return Interval(None, None, None, level, n, "kappa")
    observed = cells[0][0] + cells[1][1]
    kappa = (observed - expected) / (1 - expected)
    a = sum(cells[i][i] * (1 - (row[i] + col[i]) * (1 - kappa)) ** 2 for i in range(2))
    b = (1 - kappa) ** 2 * sum(
        cells[i][j] * (col[i] + row[j]) ** 2 for i in range(2) for j in range(2) if i != j
    )
    c = (kappa - expected * (1 - kappa)) ** 2
    var = max(Fraction(0), (a + b - c) / (1 - expected) ** 2 / n)
    half = normal_quantile(0.5 + level / 2) * math.sqrt(var)
    k = float(kappa)
    return Interval(k, max(-1.0, k - half), min(1.0, k + half), level, n, "kappa")
