"""The distributions the statistics need, on the standard library alone.

The normal quantile is :class:`statistics.NormalDist`'s (Wichura's AS241). Student's
t and the binomial tail go through the regularized incomplete beta function,
evaluated by its continued fraction (modified Lentz); the t quantile inverts that
CDF by Newton steps kept inside a bracket. The tests hold every function here to
``scipy.stats`` within 1e-9 (relative, and absolute near 0).
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["binom_half_cdf", "normal_quantile", "t_cdf", "t_quantile", "two_sided_z"]

_NORMAL = NormalDist()
_TINY = 1e-300
_EPS = 1e-16
_EXACT_BINOMIAL = 4000  # up to this many trials the binomial tail is summed in integers


def normal_quantile(p: float) -> float:
    """The standard normal quantile of ``p`` (0 < p < 1)."""
    return _NORMAL.inv_cdf(p)


def two_sided_z(level: float) -> float:
    """The normal quantile that leaves ``(1 - level) / 2`` in each tail."""
    return normal_quantile(0.5 + level / 2)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), by the modified Lentz method."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"the incomplete beta fraction did not converge (a={a}, b={b})")


def _stirling_tail(x: float) -> float:
    return 1 / (12 * x) - 1 / (360 * x**3) + 1 / (1260 * x**5) - 1 / (1680 * x**7)


def _lgamma_step(a: float, b: float) -> float:
    """ln Gamma(a + b) - ln Gamma(a), without the cancellation of two huge lgammas when
    ``a`` is large (Student's t with many degrees of freedom)."""
    if a < 100:
        return math.lgamma(a + b) - math.lgamma(a)
    return (
        (a - 0.5) * math.log1p(b / a)
        + b * math.log(a + b)
        - b
        + _stirling_tail(a + b)
        - _stirling_tail(a)
    )


def beta_inc(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularized incomplete beta function I_x(a, b); ``y`` is ``1 - x`` when the
    caller can give it more exactly than the subtraction would."""
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    big, small = max(a, b), min(a, b)
    log_front = _lgamma_step(big, small) - math.lgamma(small) + a * math.log(x) + b * math.log(y)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, y) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t CDF with ``df`` degrees of freedom."""
    if math.isinf(df):
        return _NORMAL.cdf(t)
    if t == 0.0:
        return 0.5
    # the tail beyond |t|, never 1 minus something small (the far tail keeps its digits)
    tail = _t_tail(abs(t), df)
    return 1.0 - tail if t > 0 else tail


def _t_pdf(t: float, df: float) -> float:
    log = (
        _lgamma_step(df / 2, 0.5)
        - 0.5 * math.log(df * math.pi)
        - (df + 1) / 2 * math.log1p(t * t / df)
    )
    return math.exp(log)


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile of ``p`` (0 < p < 1) with ``df`` > 0 degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, not {p}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if math.isinf(df) or df > 1e10:
        return normal_quantile(p)
    if df == 1:  # Cauchy: the cotangent keeps a far tail's digits
        return -1.0 / math.tan(math.pi * p) if p < 0.5 else 1.0 / math.tan(math.pi * (1.0 - p))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    # solve for the smaller tail (1 - p is exact for p >= 1/2), then give it its sign
    target = p if p < 0.5 else 1.0 - p
    x = _upper_tail_point(target, df)
    return -x if p < 0.5 else x


def _t_tail(x: float, df: float) -> float:
    """P(T > x) for x >= 0, without subtracting from 1."""
    x2 = x * x
    return 0.5 * beta_inc(df / 2.0, 0.5, df / (df + x2), x2 / (df + x2))


def _upper_tail_point(target: float, df: float) -> float:
    """The x >= 0 with P(T > x) = target (< 1/2): Newton steps inside a bracket."""
    lo, hi = 0.0, 1.0
    while _t_tail(hi, df) > target:
        lo, hi = hi, hi * 2
    x = min(max(-normal_quantile(target), lo), hi)
    for _ in range(300):
        err = _t_tail(x, df) - target
        if err < 0:
            hi = x
        else:
            lo = x
        nxt = x + err / _t_pdf(x, df)  # the tail falls as x grows
        if not lo < nxt < hi:  # Newton left the bracket: halve it instead
            nxt = (lo + hi) / 2
        if abs(nxt - x) <= 1e-15 * max(1.0, abs(x)):
            return nxt
        x = nxt
    return x


def binom_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): the tail McNemar's exact test reads."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= _EXACT_BINOMIAL:
        total, term = 0, 1
        for i in range(k + 1):
            total += term
            term = term * (n - i) // (i + 1)
        return total / (1 << n)  # an int quotient: correctly rounded
    return beta_inc(n - k, k + 1, 0.5)
