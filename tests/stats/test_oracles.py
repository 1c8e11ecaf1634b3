"""Every statistic against an outside oracle (scipy.stats, statsmodels) to 1e-9 on
generated data: the runtime computes with the standard library, so these tests are
what says its numbers are right."""

from __future__ import annotations

import math
import random
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize, stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import normal_sample_size_one_tail
from statsmodels.stats.proportion import proportion_confint

from gradeloop.stats import (
    PairedCounts,
    clustered_mean,
    clustered_rate,
    corrected_rate,
    detectable_rate_difference,
    holm,
    kappa_interval,
    mcnemar_exact,
    paired_bootstrap,
    paired_rate_difference,
    paired_t,
    sample_size_paired_rates,
    t_interval,
    wilson,
)
from gradeloop.stats._dist import binom_half_cdf, t_cdf, t_quantile
from gradeloop.stats._paired import bootstrap_means, percentile

TOL = 1e-9
LEVELS = st.sampled_from([0.8, 0.9, 0.95, 0.99, 0.999])


def close(a: float | None, b: float, tol: float = TOL) -> bool:
    assert a is not None
    return abs(a - b) <= tol * max(1.0, abs(b))


def tail_close(a: float, b: float) -> bool:
    """Relative for tiny tail probabilities, absolute otherwise; below 1e-250 both
    are 0 for any use (and the oracle may have underflowed where we did not)."""
    return abs(a - b) <= TOL * (b if b < 1e-3 else 1.0) or max(a, b) < 1e-250


# -- distributions --------------------------------------------------------------------


@given(
    st.floats(0.5, 1e6) | st.sampled_from([1.0, 2.0, 3.0, 29.0, 30.0, 99.0, 100.0, 101.0]),
    st.floats(-60, 60),
)
def test_t_cdf_is_scipys(df: float, t: float) -> None:
    assert tail_close(t_cdf(t, df), float(stats.t.cdf(t, df)))


@given(
    st.floats(0.5, 1e6) | st.sampled_from([1.0, 2.0, 3.0, 7.0, 30.0, 1000.0]),
    st.floats(1e-9, 1 - 1e-9) | st.sampled_from([0.975, 0.995, 0.95, 0.9995]),
)
def test_t_quantile_is_scipys(df: float, p: float) -> None:
    assert close(t_quantile(p, df), float(stats.t.ppf(p, df)))


@given(st.integers(1, 300_000), st.data())
def test_the_binomial_tail_is_scipys(n: int, data: st.DataObject) -> None:
    spread = 4 * int(math.sqrt(n)) + 2
    k = data.draw(st.integers(max(0, n // 2 - spread), n) | st.integers(0, n))
    assert tail_close(binom_half_cdf(k, n), float(stats.binom.cdf(k, n, 0.5)))


# -- rates and means --------------------------------------------------------------------


@given(st.integers(1, 100_000), st.data(), LEVELS)
def test_wilson_is_statsmodels(n: int, data: st.DataObject, level: float) -> None:
    x = data.draw(st.integers(0, n))
    lo, hi = proportion_confint(x, n, alpha=1 - level, method="wilson")
    got = wilson(x, n, level)
    assert close(got.low, max(0.0, lo)) and close(got.high, min(1.0, hi))


def _values(data: st.DataObject, n: int) -> list[float]:
    return data.draw(st.lists(st.floats(0, 10, allow_nan=False), min_size=n, max_size=n))


@given(st.integers(2, 300), st.data(), LEVELS)
def test_the_t_interval_is_scipys(n: int, data: st.DataObject, level: float) -> None:
    xs = _values(data, n)
    exact = [Fraction(x) for x in xs]
    got = t_interval(n, sum(exact), sum(x * x for x in exact), level)
    sem = stats.sem(xs)
    if sem == 0:
        assert got.low == got.high == got.estimate
        return
    lo, hi = stats.t.interval(level, n - 1, loc=np.mean(xs), scale=sem)
    assert close(got.low, lo, 1e-9) and close(got.high, hi, 1e-9)


def _clusters(data: st.DataObject) -> tuple[list[int], list[float]]:
    g = data.draw(st.integers(2, 25))
    sizes = data.draw(st.lists(st.integers(1, 8), min_size=g, max_size=g))
    groups = [i for i, m in enumerate(sizes) for _ in range(m)]
    return groups, _values(data, len(groups))


def _ols_cluster(ys: list[float], groups: list[int], level: float) -> tuple[float, float, float]:
    fit = OLS(np.asarray(ys, float), np.ones((len(ys), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(groups)}, use_t=True
    )
    lo, hi = fit.conf_int(alpha=1 - level)[0]
    return float(fit.params[0]), float(lo), float(hi)


@given(st.data(), LEVELS)
def test_the_clustered_mean_is_statsmodels_cluster_robust_ols(
    data: st.DataObject, level: float
) -> None:
    groups, ys = _clusters(data)
    per: dict[int, list[float]] = {}
    for gid, y in zip(groups, ys, strict=True):
        per.setdefault(gid, []).append(y)
    got = clustered_mean([(sum(Fraction(y) for y in v), len(v)) for v in per.values()], level)
    mean, lo, hi = _ols_cluster(ys, groups, level)
    assert close(got.estimate, mean)
    assert close(got.low, lo, 1e-8) and close(got.high, hi, 1e-8)  # OLS sums in floats


@given(st.data(), LEVELS)
def test_the_clustered_rate_is_wilson_on_the_cluster_robust_effective_size(
    data: st.DataObject, level: float
) -> None:
    g = data.draw(st.integers(2, 30))
    sizes = data.draw(st.lists(st.integers(1, 10), min_size=g, max_size=g))
    hits = [data.draw(st.integers(0, m)) for m in sizes]
    got = clustered_rate(list(zip(hits, sizes, strict=True)), level)
    n, x = sum(sizes), sum(hits)
    groups = [i for i, m in enumerate(sizes) for _ in range(m)]
    ys = [1.0 if j < h else 0.0 for h, m in zip(hits, sizes, strict=True) for j in range(m)]
    fit = OLS(np.asarray(ys), np.ones((n, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(groups)}, use_t=True
    )
    var = float(fit.bse[0]) ** 2
    p = x / n
    n_eff = g if p in (0, 1) else n if var <= 1e-15 else min(n, p * (1 - p) / var)
    # Wilson with Student's t on G - 1 in place of z: the alpha that makes z that value
    tq = stats.t.ppf(0.5 + level / 2, g - 1)
    alpha = 2 * stats.norm.sf(tq)
    if alpha < 1e-12:
        return  # a t quantile far in the tail (two clusters at 99 %): no alpha holds it
    lo, hi = proportion_confint(p * n_eff, n_eff, alpha=alpha, method="wilson")
    assert close(got.low, max(0.0, lo), 1e-8) and close(got.high, min(1.0, hi), 1e-8)


# -- agreement ------------------------------------------------------------------------


@given(st.lists(st.integers(0, 60), min_size=4, max_size=4), LEVELS)
def test_kappa_and_its_interval_are_statsmodels(cells: list[int], level: float) -> None:
    both_pass, both_fail, a_only, b_only = cells
    table = np.array([[both_pass, a_only], [b_only, both_fail]], float)
    got = kappa_interval(both_pass, both_fail, a_only, b_only, level)
    n = sum(cells)
    rows, cols = table.sum(1) / max(n, 1), table.sum(0) / max(n, 1)
    if n == 0 or math.isclose(float(rows @ cols), 1.0, abs_tol=1e-15):
        assert got.estimate is None
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cohens_kappa(table)
    assert close(got.estimate, res.kappa)
    z = stats.norm.ppf(0.5 + level / 2)
    # a variance of zero comes out of statsmodels' sums as rounding noise either side of
    # it (a tiny negative one makes its std_kappa NaN): the interval is the point itself
    var = float(res.var_kappa)
    std = math.sqrt(var) if var > 1e-15 else 0.0
    assert close(got.low, max(-1.0, res.kappa - z * std))
    assert close(got.high, min(1.0, res.kappa + z * std))


# -- paired comparisons ---------------------------------------------------------------


@given(st.integers(0, 3000), st.integers(0, 3000))
def test_mcnemar_exact_is_statsmodels(lost: int, gained: int) -> None:
    expected = mcnemar([[5, lost], [gained, 5]], exact=True).pvalue
    assert tail_close(mcnemar_exact(lost, gained), float(expected))
    if lost + gained:
        scipy_p = stats.binomtest(lost, lost + gained, 0.5).pvalue
        assert tail_close(mcnemar_exact(lost, gained), float(scipy_p))


def _newcombe(t: PairedCounts, level: float) -> tuple[float, float]:
    """Newcombe (1998) method 10, written out here from statsmodels' Wilson limits."""
    n = t.n
    p1, p2 = (t.both + t.gained) / n, (t.both + t.lost) / n
    l1, u1 = proportion_confint(t.both + t.gained, n, alpha=1 - level, method="wilson")
    l2, u2 = proportion_confint(t.both + t.lost, n, alpha=1 - level, method="wilson")
    r, s, tt, u = t.both, t.gained, t.lost, t.neither
    a = (r + s) * (tt + u) * (r + tt) * (s + u)
    b = r * u - s * tt
    c = b - n / 2 if b > n / 2 else (b if b < 0 else 0)
    phi = 0.0 if a == 0 else c / math.sqrt(a)
    d = p1 - p2
    low = d - math.sqrt(max(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(max(0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1.0, low), min(1.0, high)


@given(st.lists(st.integers(0, 80), min_size=4, max_size=4), LEVELS)
def test_the_paired_difference_interval_is_newcombes(cells: list[int], level: float) -> None:
    t = PairedCounts(*cells)
    if t.n == 0:
        return
    lo, hi = _newcombe(t, level)
    got = paired_rate_difference(t, level)
    assert close(got.low, lo) and close(got.high, hi)


@given(st.integers(2, 200), st.data(), LEVELS)
def test_the_paired_t_interval_and_p_are_scipys(n: int, data: st.DataObject, level: float) -> None:
    a, b = _values(data, n), _values(data, n)
    got, p = paired_t(a, b, level)
    diffs = np.asarray(b) - np.asarray(a)
    if np.std(diffs) < 1e-100:
        return  # (almost) no spread: scipy warns and gives nan; that case is tested apart
    res = stats.ttest_rel(b, a)
    lo, hi = res.confidence_interval(level)
    assert close(got.low, lo, 1e-8) and close(got.high, hi, 1e-8)
    assert tail_close(p, float(res.pvalue)) or abs(p - res.pvalue) < 1e-8


def test_a_paired_t_without_spread_is_the_point_itself() -> None:
    got, p = paired_t([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert (got.low, got.high, p) == (1.0, 1.0, 0.0)
    assert paired_t([1.0, 2.0], [1.0, 2.0])[1] == 1.0


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=60), st.floats(0, 1))
def test_percentile_is_numpys(values: list[float], q: float) -> None:
    assert close(percentile(values, q), float(np.percentile(values, q * 100)))


def test_the_bootstrap_is_its_resamples_percentiles_and_agrees_with_scipys() -> None:
    rng = random.Random(3)
    a = [rng.uniform(0, 10) for _ in range(80)]
    b = [x + rng.gauss(0.4, 1.5) for x in a]
    got = paired_bootstrap(a, b, 0.95, resamples=4000, seed=11)
    means = bootstrap_means([y - x for x, y in zip(a, b, strict=True)], 4000, 11)
    assert got.low == percentile(means, 0.025) and got.high == percentile(means, 0.975)
    assert got == paired_bootstrap(a, b, 0.95, resamples=4000, seed=11)  # seeded
    res = stats.bootstrap(
        (np.asarray(b) - np.asarray(a),), np.mean, confidence_level=0.95, method="percentile",
        n_resamples=4000, rng=np.random.default_rng(0),
    )  # fmt: skip
    # two random resamplings: equal within Monte Carlo error, not to the digit
    assert abs(got.low - res.confidence_interval.low) < 0.05
    assert abs(got.high - res.confidence_interval.high) < 0.05


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_is_statsmodels(ps: list[float]) -> None:
    expected = multipletests(ps, method="holm")[1]
    assert all(close(a, float(b)) for a, b in zip(holm(ps), expected, strict=True))


# -- power ----------------------------------------------------------------------------


def _paired_n(delta: float, discordant: float, alpha: float, power: float) -> float:
    spread = max(discordant, delta)
    return float(
        normal_sample_size_one_tail(
            delta, power, alpha / 2, std_null=math.sqrt(spread),
            std_alternative=math.sqrt(spread - delta * delta),
        )
    )  # fmt: skip


@given(st.floats(0.05, 0.95), st.floats(0.01, 0.3), st.sampled_from([0.01, 0.05, 0.1]))
def test_the_sample_size_is_statsmodels_normal_power(
    rate: float, detect: float, alpha: float
) -> None:
    other = rate - detect if rate - detect >= 0 else rate + detect
    if not 0 <= other <= 1:
        return
    psi = rate * (1 - other) + other * (1 - rate)
    expected = _paired_n(detect, psi, alpha, 0.8)
    assert sample_size_paired_rates(rate, detect, alpha=alpha) == math.ceil(expected - 1e-9)


@given(st.integers(5, 20_000), st.floats(0.0, 0.6))
def test_the_detectable_difference_needs_exactly_the_pairs_it_had(n: int, psi: float) -> None:
    d = detectable_rate_difference(n, psi)
    assert d is not None
    if d < 1.0:
        assert close(_paired_n(d, psi, 0.05, 0.8), n, 1e-9)


# -- the corrected rate ---------------------------------------------------------------


def _rogan_gladen(v: np.ndarray) -> float:
    q, tpr, tnr = v
    return float((q + tnr - 1) / (tpr + tnr - 1))


@given(
    st.integers(20, 5000), st.floats(0.05, 0.95), st.integers(10, 300), st.integers(10, 300),
    st.floats(0.6, 1.0), st.floats(0.6, 1.0), LEVELS,
)  # fmt: skip
def test_the_corrected_rate_is_rogan_gladen_with_the_delta_method(
    n: int, q: float, pos: int, neg: int, tpr: float, tnr: float, level: float
) -> None:
    met, tp, tn = round(q * n), round(tpr * pos), round(tnr * neg)
    got = corrected_rate(
        met, n, true_positive=tp, positives=pos, true_negative=tn, negatives=neg, level=level
    )
    qh, rh, sh = met / n, tp / pos, tn / neg
    if rh + sh - 1 <= 0:
        assert got.rate is None and got.note and "too weak" in got.note
        return
    raw = (qh + sh - 1) / (rh + sh - 1)
    assert close(got.rate, min(1.0, max(0.0, raw)))
    # the delta method's gradient, checked against a numerical derivative (scipy)
    grad = optimize.approx_fprime(np.array([qh, rh, sh]), _rogan_gladen, 1e-7)
    var = (
        grad[0] ** 2 * qh * (1 - qh) / n
        + grad[1] ** 2 * rh * (1 - rh) / pos
        + grad[2] ** 2 * sh * (1 - sh) / neg
    )
    half = stats.norm.ppf(0.5 + level / 2) * math.sqrt(var)
    assert got.interval.low is not None and got.interval.high is not None
    assert abs(got.interval.low - min(1.0, max(0.0, raw - half))) < 1e-5
    assert abs(got.interval.high - min(1.0, max(0.0, raw + half))) < 1e-5


def test_the_corrected_rate_says_when_the_judge_is_too_weak() -> None:
    got = corrected_rate(30, 100, true_positive=5, positives=10, true_negative=5, negatives=10)
    assert got.rate is None and got.note is not None and "TPR + TNR = 1.00" in got.note
    fine = corrected_rate(30, 100, true_positive=9, positives=10, true_negative=9, negatives=10)
    assert fine.rate == pytest.approx(0.25) and fine.note is None
