"""How propose chooses: exact phrases, cross-validation, the simplest among near-equals."""

from __future__ import annotations

import pytest

from gradeloop import Rubric
from gradeloop.migration import propose_checkers
from gradeloop.migration._propose_candidates import Candidate
from gradeloop.migration._propose_cv import NEAR, complexity, folds
from gradeloop.migration._propose_evidence import Example, split
from tests.support.propose_helpers import NEAR_MISSES, exact_phrase, unexplained

RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "refund", "description": "States the refund policy."},
            {"key": "tone", "description": "Sounds warm."},
        ]
    }
)


@pytest.mark.parametrize("seed", range(4))
def test_the_exact_required_phrase_is_found_and_wins(seed: int) -> None:
    p = propose_checkers(RUBRIC, "refund", exact_phrase(60, seed), use_model=False, seed=seed)
    assert p.winner is not None
    assert (p.winner.checker, p.winner.options["values"]) == ("contains", ("30-day refund",))
    assert p.winner.heldout.kappa == 1.0


def test_the_phrase_found_does_not_match_the_near_misses() -> None:
    from gradeloop_checkers.text import contains

    for miss in NEAR_MISSES:
        found = contains(miss, values=("30-day refund",), ignore_case=True, whole_word=True)
        assert not found.passed
    assert contains("our 30-day refund policy", values=("30-day refund",), whole_word=True).passed


def test_a_chance_fit_scores_low_under_cross_validation() -> None:
    """Coin-flip verdicts: the candidate that fits the training drafts best is a
    coincidence; cross-validation scores it near nothing, so it does not lead."""
    for seed in range(3):
        p = propose_checkers(RUBRIC, "tone", unexplained(60, seed), use_model=False, seed=seed)
        fit = max(p.candidates, key=lambda c: c.train.kappa or -2)
        assert (fit.train.kappa or 0) >= 0.3
        assert (fit.cv or 0) < (fit.train.kappa or 0) - 0.2
        assert p.best is not None and (p.best.cv or 0) < 0.3


def test_among_near_equal_scores_the_simplest_wins() -> None:
    """One training draft is labelled met without the phrase (a labelling slip) and
    holds a reference number: the list "the phrase, or that number" agrees with one
    more training draft than the phrase alone, a hair better (within NEAR). The plain
    phrase wins."""
    examples = exact_phrase(90, 0)
    slip = next(e for e in split(examples, 0).train if not e.met)
    examples = [
        Example(e.output_id, e.task, e.draft + " Reference ZX-41.", True) if e is slip else e
        for e in examples
    ]
    listed = (
        "contains",
        {"values": ["30-day refund", "zx-41"], "mode": "any", "ignore_case": True},
    )
    p = propose_checkers(RUBRIC, "refund", examples, use_model=False, candidates=[listed])
    by_values = {c.options.get("values"): c for c in p.candidates}
    phrase, longer = by_values[("30-day refund",)], by_values[("30-day refund", "zx-41")]
    assert (longer.train.kappa or 0) > (phrase.train.kappa or 0)  # it fits the slip too
    assert (longer.cv or 0) - (phrase.cv or 0) <= NEAR
    assert p.best is phrase


def test_complexity_counts_values_not_flags() -> None:
    one = Candidate("contains", {"values": ["a b"], "ignore_case": True, "whole_word": True})
    four = Candidate("contains", {"values": ["a", "b", "c", "d"], "mode": "any"})
    assert complexity(one)[0] == 1 and complexity(four)[0] == 5  # the mode is a value too
    assert NEAR == 0.05


def test_folds_are_stratified_seeded_and_cover_every_draft() -> None:
    ex = exact_phrase(40, 0)
    a, b = folds(ex, 5, 1), folds(ex, 5, 1)
    assert a == b and sorted(i for f in a for i in f) == list(range(40))
    for f in a:
        assert {ex[i].met for i in f} == {True, False}
