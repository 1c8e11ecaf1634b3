"""Where the noise comes from: the nested ANOVA's sums of squares are what statsmodels'
OLS leaves when each level joins the model,
and the components are the textbook ones on a balanced design."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.regression.linear_model import OLS

from gradeloop.stats import GradedRow, KeyOutcome, variance_shares
from gradeloop.stats._variance import nested_anova


@st.composite
def designs(draw: st.DrawFn) -> list[list[list[float]]]:
    """items -> drafts -> samples (unbalanced)."""
    values = st.sampled_from([0.0, 1.0, 2.5, 7.0, 10.0])
    return draw(
        st.lists(
            st.lists(st.lists(values, min_size=1, max_size=4), min_size=1, max_size=4),
            min_size=2,
            max_size=6,
        )
    )


def _drafts(design: list[list[list[float]]]) -> list[list[tuple[int, Fraction, Fraction]]]:
    return [
        [
            (len(s), sum(map(Fraction, s), Fraction(0)), sum(Fraction(v) ** 2 for v in s))
            for s in item
        ]
        for item in design
    ]


@given(designs())
def test_the_sums_of_squares_are_statsmodels_ols_residuals(
    design: list[list[list[float]]],
) -> None:
    frame = pd.DataFrame(
        [
            {"x": v, "item": f"i{i}", "draft": f"i{i}d{d}"}
            for i, item in enumerate(design)
            for d, samples in enumerate(item)
            for v in samples
        ]
    )
    # each level's sum of squares is the drop in OLS's residual sum of squares when
    # its dummies join the model: intercept -> items -> drafts (nested, so full rank)
    x = frame["x"].to_numpy(float)
    ssr = [
        OLS(x, design_matrix).fit().ssr
        for design_matrix in (
            np.ones((len(x), 1)),
            pd.get_dummies(frame["item"]).to_numpy(float),
            pd.get_dummies(frame["draft"]).to_numpy(float),
        )
    ]
    ss = [ssr[0] - ssr[1], ssr[1] - ssr[2], ssr[2]]
    items, within, judge = (float(x) for x in nested_anova(_drafts(design)))
    assert np.allclose([items, within, judge], ss, rtol=1e-9, atol=1e-9)


def test_a_balanced_design_gives_the_textbook_components() -> None:
    rng = random.Random(7)
    t, d, k = 6, 4, 3
    design = [
        [[rng.gauss(mu + nu, 0.5) for _ in range(k)] for nu in (rng.gauss(0, 1) for _ in range(d))]
        for mu in (rng.gauss(0, 2) for _ in range(t))
    ]
    rows = [
        GradedRow(f"{i}-{j}", True, {"k": KeyOutcome(True, 5.0, scores=tuple(s))}, task=f"t{i}")
        for i, item in enumerate(design)
        for j, s in enumerate(item)
    ]
    got = variance_shares(rows)["k"]
    ss_items, ss_gen, ss_judge = (float(x) for x in nested_anova(_drafts(design)))
    ms_i, ms_g, ms_j = ss_items / (t - 1), ss_gen / (t * (d - 1)), ss_judge / (t * d * (k - 1))
    assert abs(got.judge - ms_j) < 1e-12
    assert abs(got.generator - max(0.0, (ms_g - ms_j) / k)) < 1e-12
    assert abs(got.items - max(0.0, (ms_i - ms_g) / (d * k))) < 1e-12
    assert (got.samples, got.drafts, got.groups) == (t * d * k, t * d, t)
    shares = got.shares
    assert abs(sum(v for v in shares.values() if v is not None) - 1.0) < 1e-12


def test_a_design_that_cannot_split_the_parts_gives_none() -> None:
    one_sample = [
        GradedRow(str(i), True, {"k": KeyOutcome(True, votes=(True,))}, task=f"t{i % 2}")
        for i in range(8)
    ]
    assert variance_shares(one_sample) == {}
    no_task = [
        GradedRow(str(i), True, {"k": KeyOutcome(True, votes=(True, False))}) for i in range(8)
    ]
    assert variance_shares(no_task) == {}
    split = [
        GradedRow(str(i), True, {"k": KeyOutcome(True, votes=(True, i % 3 == 0))}, task=f"t{i % 2}")
        for i in range(8)
    ]
    assert set(variance_shares(split)) == {"k"}
