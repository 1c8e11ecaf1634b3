"""Two runs on the same drafts: paired tests, intervals on the difference, Holm's
correction, and the smallest difference a comparison could detect.

Binary outcomes (a key met, a draft accepted) are compared by McNemar's exact test
on the discordant pairs, with Newcombe's hybrid score interval for the paired
difference of rates (Newcombe 1998, method 10). Scores are compared by the paired
t interval and a seeded paired bootstrap (percentile). Power and detectable
differences use the normal approximation of the paired test (Connor 1987).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ._dist import binom_half_cdf, normal_quantile, t_cdf, two_sided_z
from ._intervals import Interval, _wilson_bounds, check_level, t_interval

__all__ = [
    "PairedCounts",
    "detectable_mean_difference",
    "detectable_rate_difference",
    "holm",
    "mcnemar_exact",
    "paired_bootstrap",
    "paired_rate_difference",
    "paired_t",
    "percentile",
    "sample_size_paired_rates",
]


@dataclass(frozen=True)
class PairedCounts:
    """The 2x2 table of a binary outcome in two runs over the same drafts:
    ``both`` (met in both), ``neither``, ``lost`` (met in the baseline only: the
    candidate lost it) and ``gained`` (met in the candidate only)."""

    both: int = 0
    neither: int = 0
    lost: int = 0
    gained: int = 0

    @property
    def n(self) -> int:
        """Pairs."""
        return self.both + self.neither + self.lost + self.gained

    @property
    def baseline_rate(self) -> float | None:
        """The baseline's rate."""
        return (self.both + self.lost) / self.n if self.n else None

    @property
    def candidate_rate(self) -> float | None:
        """The candidate's rate."""
        return (self.both + self.gained) / self.n if self.n else None

    @property
    def difference(self) -> float | None:
        """Candidate minus baseline: (gained - lost) / n."""
        return (self.gained - self.lost) / self.n if self.n else None

    @classmethod
    def of(cls, baseline: Sequence[bool], candidate: Sequence[bool]) -> PairedCounts:
        """Count the table from paired outcomes."""
        if len(baseline) != len(candidate):
            raise ValueError(f"{len(baseline)} and {len(candidate)} outcomes: pair them first")
        pairs = list(zip(baseline, candidate, strict=True))
        return cls(
            both=sum(1 for a, b in pairs if a and b),
            neither=sum(1 for a, b in pairs if not a and not b),
            lost=sum(1 for a, b in pairs if a and not b),
            gained=sum(1 for a, b in pairs if not a and b),
        )


def mcnemar_exact(lost: int, gained: int) -> float:
    """McNemar's exact two-sided p-value: the binomial test of the discordant pairs
    against 1/2 (``statsmodels.stats.contingency_tables.mcnemar(exact=True)``)."""
    n = lost + gained
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * binom_half_cdf(min(lost, gained), n))


def paired_rate_difference(t: PairedCounts, level: float = 0.95) -> Interval:
    """Newcombe's hybrid score interval for candidate rate minus baseline rate on
    paired data: each run's Wilson interval, combined with the correlation of the
    pairs (its phi with the continuity correction Newcombe gives)."""
    check_level(level)
    n = t.n
    if n == 0:
        return Interval(None, None, None, level, 0, "newcombe-paired")
    z = two_sided_z(level)
    p1, p2 = (t.both + t.gained) / n, (t.both + t.lost) / n  # candidate, baseline
    l1, u1 = _wilson_bounds(p1, n, z)
    l2, u2 = _wilson_bounds(p2, n, z)
    phi = _phi(t)
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return Interval(d, max(-1.0, low), min(1.0, high), level, n, "newcombe-paired")


def _phi(t: PairedCounts) -> float:
    """The correlation of the pairs, shrunk toward 0 by the continuity correction."""
    a, d = t.both, t.neither
    b, c = t.gained, t.lost  # candidate met only, baseline met only
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    cross = float(a * d - b * c)
    if cross > t.n / 2:
        cross -= t.n / 2
    elif cross >= 0:
        cross = 0.0
    return cross / math.sqrt(margins)


def paired_t(
    baseline: Sequence[float], candidate: Sequence[float], level: float = 0.95
) -> tuple[Interval, float]:
    """The paired t interval for the mean of candidate - baseline, and its two-sided
    p-value (``scipy.stats.ttest_rel``). With no spread the p-value is 1 for a zero
    difference and 0 otherwise."""
    if len(baseline) != len(candidate):
        raise ValueError(f"{len(baseline)} and {len(candidate)} scores: pair them first")
    exact = [Fraction(c) - Fraction(b) for b, c in zip(baseline, candidate, strict=True)]
    diffs = [float(x) for x in exact]
    total = sum(exact, Fraction(0))
    interval = t_interval(len(diffs), total, sum((x * x for x in exact), Fraction(0)), level)
    n = len(diffs)
    if n < 2 or interval.low is None or interval.estimate is None:
        return interval, 1.0
    mean = total / n
    var = (sum((x * x for x in exact), Fraction(0)) - total * mean) / (n - 1)
    se = math.sqrt(var / n)
    if se == 0:  # no spread (or less than a float holds)
        return interval, 1.0 if mean == 0 else 0.0
    stat = float(mean) / se
    return interval, min(1.0, 2.0 * t_cdf(-abs(stat), n - 1))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0-1) by linear interpolation between order statistics
    (numpy's default ``"linear"`` method)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    h = (len(ordered) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def bootstrap_means(diffs: Sequence[float], resamples: int, seed: int) -> list[float]:
    """The means of ``resamples`` resamples (with replacement) of ``diffs``, drawn
    with :class:`random.Random` seeded by ``seed``: the same seed, the same means."""
    rng = random.Random(seed)
    n = len(diffs)
    return [math.fsum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples)]


def paired_bootstrap(
    baseline: Sequence[float],
    candidate: Sequence[float],
    level: float = 0.95,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """The percentile bootstrap interval for the mean of candidate - baseline, pairs
    resampled together, reproducible by ``seed``."""
    check_level(level)
    if len(baseline) != len(candidate):
        raise ValueError(f"{len(baseline)} and {len(candidate)} scores: pair them first")
    diffs = [float(c) - float(b) for b, c in zip(baseline, candidate, strict=True)]
    if not diffs:
        return Interval(None, None, None, level, 0, "bootstrap")
    means = bootstrap_means(diffs, resamples, seed)
    alpha = 1 - level
    mean = math.fsum(diffs) / len(diffs)
    low, high = percentile(means, alpha / 2), percentile(means, 1 - alpha / 2)
    return Interval(mean, low, high, level, len(diffs), "bootstrap")


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order
    (``statsmodels.stats.multitest.multipletests(method="holm")``)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _needed(delta: float, discordant: float, alpha: float, power: float) -> float:
    """Pairs needed (unrounded) to detect ``delta`` with a two-sided paired test."""
    za, zb = normal_quantile(1 - alpha / 2), normal_quantile(power)
    spread = max(discordant, abs(delta))  # a true difference of delta needs that much discord
    return (
        (za * math.sqrt(spread) + zb * math.sqrt(max(0.0, spread - delta * delta))) / delta
    ) ** 2


def sample_size_paired_rates(
    baseline_rate: float,
    detect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    discordant: float | None = None,
) -> int:
    """Drafts a paired comparison of two runs needs to detect a change of ``detect``
    in a rate near ``baseline_rate`` at ``power`` (two-sided, level ``alpha``).

    ``discordant`` is the expected share of drafts whose outcome differs between
    the runs; by default the runs are taken as independent given the draft
    (p1 (1 - p2) + p2 (1 - p1)), which is the most it can be for those rates, so
    the count errs on the safe side. Connor's (1987) formula for McNemar's test.
    """
    _check_rate(baseline_rate, "baseline rate")
    if not 0 < detect <= 1:
        raise ValueError(f"the difference to detect is in (0, 1], not {detect}")
    other = baseline_rate - detect if baseline_rate - detect >= 0 else baseline_rate + detect
    if not 0 <= other <= 1:
        raise ValueError(f"a rate of {baseline_rate} cannot move by {detect}")
    if discordant is None:
        discordant = baseline_rate * (1 - other) + other * (1 - baseline_rate)
    _check_rate(discordant, "discordant share")
    return math.ceil(_needed(detect, discordant, alpha, power) - 1e-9)


def _check_rate(x: float, what: str) -> None:
    if not 0 <= x <= 1:
        raise ValueError(f"the {what} is between 0 and 1, not {x}")


def detectable_rate_difference(
    n: int, discordant: float, *, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest change of a rate that ``n`` pairs detect at ``power``, given the
    observed share of discordant pairs (at least the change itself: a change of d
    moves at least d of the drafts). None with no pairs."""
    if n <= 0:
        return None
    lo, hi = 0.0, 1.0
    if _needed(hi, discordant, alpha, power) > n:
        return 1.0  # not even a change from 0 to 1 would show
    for _ in range(100):  # _needed falls as delta grows: bisect
        mid = (lo + hi) / 2
        if mid == 0 or _needed(mid, discordant, alpha, power) > n:
            lo = mid
        else:
            hi = mid
    return hi


def detectable_mean_difference(
    n: int, sd: float, *, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest mean difference ``n`` pairs with differences of standard deviation
    ``sd`` detect at ``power`` (normal approximation). None below two pairs."""
    if n < 2:
        return None
    return (normal_quantile(1 - alpha / 2) + normal_quantile(power)) * sd / math.sqrt(n)
