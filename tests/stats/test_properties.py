"""Invariants of the intervals and tests, for any data: an interval holds its
estimate, stays inside its range, narrows as the data grow; McNemar is symmetric."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from gradeloop.stats import (
    PairedCounts,
    clustered_rate,
    kappa_interval,
    mcnemar_exact,
    paired_rate_difference,
    t_interval,
    wilson,
)

LEVELS = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@given(st.integers(1, 10_000), st.data(), LEVELS)
def test_wilson_holds_its_estimate_inside_zero_one(
    n: int, data: st.DataObject, level: float
) -> None:
    x = data.draw(st.integers(0, n))
    got = wilson(x, n, level)
    assert got.low is not None and got.high is not None
    assert 0.0 <= got.low <= x / n <= got.high <= 1.0
    assert got.contains(x / n)


@given(st.integers(1, 2000), st.integers(2, 20), st.floats(0, 1), LEVELS)
def test_wilson_narrows_as_n_grows(n: int, factor: int, rate: float, level: float) -> None:
    x = round(rate * n)
    small, big = wilson(x, n, level), wilson(x * factor, n * factor, level)
    assert small.low is not None and small.high is not None
    assert big.low is not None and big.high is not None
    assert big.high - big.low < small.high - small.low


@given(st.integers(1, 500), st.sampled_from([0.8, 0.9, 0.95]), st.sampled_from([0.95, 0.99]))
def test_a_higher_level_gives_a_wider_interval(n: int, lower: float, higher: float) -> None:
    a, b = wilson(n // 3, n, lower), wilson(n // 3, n, higher)
    assert a.low is not None and a.high is not None and b.low is not None and b.high is not None
    assert b.low <= a.low and a.high <= b.high


@given(st.lists(st.floats(0, 10), min_size=2, max_size=50), LEVELS)
def test_the_t_interval_holds_the_mean_and_narrows_when_repeated(
    xs: list[float], level: float
) -> None:
    exact = [Fraction(x) for x in xs]
    one = t_interval(len(xs), sum(exact), sum(x * x for x in exact), level)
    assert one.low is not None and one.high is not None and one.estimate is not None
    assert one.low <= one.estimate <= one.high
    twice = t_interval(2 * len(xs), 2 * sum(exact), 2 * sum(x * x for x in exact), level)
    assert twice.low is not None and twice.high is not None
    assert twice.high - twice.low <= one.high - one.low + 1e-12


@given(st.lists(st.tuples(st.integers(0, 10), st.integers(1, 10)), min_size=2, max_size=30), LEVELS)
def test_the_clustered_rate_is_inside_zero_one_and_never_narrower_than_wilson(
    raw: list[tuple[int, int]], level: float
) -> None:
    clusters = [(min(s, m), m) for s, m in raw]
    got = clustered_rate(clusters, level)
    x, n = sum(s for s, _ in clusters), sum(m for _, m in clusters)
    plain = wilson(x, n, level)
    assert got.low is not None and got.high is not None
    assert 0.0 <= got.low <= x / n <= got.high <= 1.0
    assert plain.low is not None and plain.high is not None
    assert got.high - got.low >= plain.high - plain.low - 1e-12


@given(st.integers(0, 500), st.integers(0, 500))
def test_mcnemar_is_symmetric_and_a_probability(lost: int, gained: int) -> None:
    p = mcnemar_exact(lost, gained)
    assert p == mcnemar_exact(gained, lost)
    assert 0.0 < p <= 1.0
    if lost == gained:
        assert p == 1.0


@given(st.lists(st.integers(0, 60), min_size=4, max_size=4), LEVELS)
def test_the_paired_difference_holds_its_estimate_and_mirrors(
    cells: list[int], level: float
) -> None:
    t = PairedCounts(*cells)
    got = paired_rate_difference(t, level)
    if t.n == 0:
        assert got.ci is None
        return
    assert got.low is not None and got.high is not None and got.estimate is not None
    assert -1.0 <= got.low <= got.estimate <= got.high <= 1.0
    swapped = paired_rate_difference(PairedCounts(t.both, t.neither, t.gained, t.lost), level)
    assert swapped.low is not None and swapped.high is not None
    assert abs(swapped.low + got.high) < 1e-12 and abs(swapped.high + got.low) < 1e-12


@given(st.lists(st.integers(0, 60), min_size=4, max_size=4), LEVELS)
def test_kappa_holds_its_estimate_inside_minus_one_one(cells: list[int], level: float) -> None:
    got = kappa_interval(*cells, level=level)
    if got.estimate is None:
        return
    assert got.low is not None and got.high is not None
    assert -1.0 <= got.low <= got.estimate <= got.high <= 1.0
