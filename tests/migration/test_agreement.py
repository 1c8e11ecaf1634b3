"""Agreement statistics against values computed by hand, degenerate cases included."""

from __future__ import annotations

import pytest

from gradeloop.migration._agreement import (
    Confusion,
    agreement_rate,
    cohen_kappa,
    confusion,
    mean_absolute_error,
    pass_fail_stats,
    pearson,
    score_stats,
)

T, F = True, False

# Ten items. Cells by hand: both pass 1,2,7,9 -> 4; both fail 4,5,8 -> 3;
# A pass/B fail 3,10 -> 2; A fail/B pass 6 -> 1.
A = [T, T, T, F, F, F, T, F, T, T]
B = [T, T, F, F, F, T, T, F, T, F]


def test_confusion_counts_each_cell() -> None:
    assert confusion(A, B) == Confusion(both_pass=4, both_fail=3, a_pass_b_fail=2, a_fail_b_pass=1)
    assert confusion(A, B).n == 10 and confusion(A, B).agreements == 7


def test_agreement_rate() -> None:
    assert agreement_rate(A, B) == pytest.approx(0.7)
    assert agreement_rate([], []) is None


def test_kappa_by_hand() -> None:
    # po = 0.7; pA = 0.6, pB = 0.5; pe = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = 0.2/0.5 = 0.4
    kappa, note = cohen_kappa(A, B)
    assert kappa == pytest.approx(0.4) and note is None


def test_kappa_is_symmetric() -> None:
    assert cohen_kappa(B, A)[0] == pytest.approx(cohen_kappa(A, B)[0])


def test_perfect_agreement_with_both_classes_is_one() -> None:
    assert cohen_kappa([T, F, T, F], [T, F, T, F]) == (1.0, None)


def test_total_disagreement_on_balanced_classes_is_minus_one() -> None:
    # po = 0, pe = 0.5: kappa = -0.5 / 0.5
    assert cohen_kappa([T, F], [F, T]) == (-1.0, None)


@pytest.mark.parametrize("answer", [T, F])
def test_both_raters_all_one_class_is_undefined_with_a_note(answer: bool) -> None:
    kappa, note = cohen_kappa([answer] * 5, [answer] * 5)
    assert kappa is None
    assert note is not None and "undefined" in note and "same answer" in note
    # the agreement itself is perfect, and is still reported
    assert agreement_rate([answer] * 5, [answer] * 5) == 1.0


def test_one_constant_rater_gives_zero_with_a_note() -> None:
    # A passes all; B passes 3 of 4: po = 0.75, pe = 1*0.75 + 0*0.25 = 0.75, kappa 0
    kappa, note = cohen_kappa([T, T, T, T], [T, T, T, F])
    assert kappa == 0.0
    assert note is not None and "kappa is 0 whatever the agreement" in note


def test_no_items_is_undefined() -> None:
    assert cohen_kappa([], []) == (None, "kappa undefined: no items were rated by both")


def test_raters_must_answer_the_same_items() -> None:
    with pytest.raises(ValueError, match="answered 2 and 1 items"):
        confusion([T, F], [T])
    with pytest.raises(ValueError, match="pair them first"):
        mean_absolute_error([1.0], [])


def test_mean_absolute_error_by_hand() -> None:
    assert mean_absolute_error([7, 5, 9], [8, 5, 6]) == pytest.approx(4 / 3)
    assert mean_absolute_error([], []) is None


def test_pearson_by_hand() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]) == (pytest.approx(1.0), None)
    assert pearson([1, 2, 3], [3, 2, 1]) == (pytest.approx(-1.0), None)
    # deviations (-1.5,-.5,.5,1.5) and (-.5,-1.5,1.5,.5): sxy = 3, sxx = syy = 5 -> 0.6
    assert pearson([1, 2, 3, 4], [2, 1, 4, 3]) == (pytest.approx(0.6), None)


def test_pearson_undefined_cases_have_notes() -> None:
    r, note = pearson([5, 5, 5], [1, 2, 3])
    assert r is None and note is not None and "same score" in note
    r, note = pearson([4], [4])
    assert r is None and note is not None and "at least 2" in note


def test_bundles_and_json() -> None:
    stats = pass_fail_stats(A, B)
    assert (stats.n, stats.agreement) == (10, pytest.approx(0.7))
    data = stats.to_json("code", "judge")
    assert data["confusion"] == {
        "both_pass": 4,
        "both_fail": 3,
        "code_pass_judge_fail": 2,
        "code_fail_judge_pass": 1,
    }
    assert data["kappa"] == 0.4 and "kappa_note" not in data
    flipped = stats.swapped().to_json("judge", "code")["confusion"]
    assert flipped["judge_pass_code_fail"] == 1 and flipped["judge_fail_code_pass"] == 2
    # deviations (0,-2,2) and (5/3,-4/3,-1/3): sxy = 2, sxx = 8, syy = 14/3
    scores = score_stats([7, 5, 9], [8, 5, 6])
    assert scores.correlation == pytest.approx(2 / (8 * 14 / 3) ** 0.5)
    assert scores.to_json() == {"n": 3, "mae": 1.3333, "correlation": 0.3273}
