"""The watch's figures carry gradeloop.stats' intervals, and its warning rests on them."""

from __future__ import annotations

import warnings
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop import HistoryStore, grade
from gradeloop.errors import GradeloopWarning
from gradeloop.history.report import render_report
from gradeloop.history.report._watch import watch_section
from gradeloop.rewards import RewardWatch, trl_reward
from gradeloop.stats import paired_t, t_interval, wilson
from tests.rewards.fakes import RUBRIC, WordJudge, columns


def _step(reward: Any, n: int, completions: list[str]) -> list[float | None]:
    state = SimpleNamespace(global_step=n)
    return reward(  # type: ignore[no-any-return]
        prompts=["p"] * len(completions),
        completions=completions,
        **{**columns(len(completions)), "trainer_state": state},
    )


WORDS = st.sampled_from(["hello", "so rude", "how odd", "rude and odd"])


@settings(max_examples=25, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12))
def test_the_intervals_are_what_stats_computes_from_the_same_rollouts(texts: list[str]) -> None:
    completions = [f"{t} {i}" for i, t in enumerate(texts)]  # distinct: one grade each
    train_judge, audit_judge = WordJudge("train", "rude"), WordJudge("audit", "odd")
    reward = trl_reward(RUBRIC, judge=train_judge, audit=audit_judge, audit_fraction=1.0)
    trained = _step(reward, 0, completions)
    audited = [grade(c, RUBRIC, task="p", judge=WordJudge("audit", "odd")) for c in completions]
    step = reward.watch.steps[0]

    # the gap: Student's t on the per-rollout differences, training minus audit
    diffs = [
        Fraction(t) - Fraction(a.overall_score / 10)
        for t, a in zip(trained, audited, strict=True)
        if t is not None and a.overall_score is not None
    ]
    expected = t_interval(len(diffs), sum(diffs), sum(d * d for d in diffs), 0.95)
    assert step.gap_interval == expected
    assert step.gap == expected.estimate and step.gap_ci == expected.ci
    assert (
        step.gap_interval
        == paired_t([a.overall_score / 10 for a in audited], [t for t in trained if t is not None])[
            0
        ]
    )
    # agreement: Wilson on the rollouts where both judges reached the same verdict
    alike = sum(("rude" in c) == ("odd" in c) for c in completions)
    assert step.agreement_intervals["polite"] == wilson(alike, len(completions), 0.95)
    assert step.agreement["polite"] == pytest.approx(alike / len(completions))
    assert step.level == 0.95


def test_a_lower_level_gives_stats_interval_at_that_level() -> None:
    completions = ["hello 1", "how odd 2", "hello 3", "how odd 4", "hello 5"]
    wide = trl_reward(RUBRIC, judge=WordJudge("t"), audit=WordJudge("a", "odd"), audit_fraction=1.0)
    narrow = trl_reward(
        RUBRIC, judge=WordJudge("t"), audit=WordJudge("a", "odd"), audit_fraction=1.0
    )
    narrow.watch.level = 0.8
    _step(wide, 0, completions)
    _step(narrow, 0, completions)
    w, n = wide.watch.steps[0], narrow.watch.steps[0]
    assert n.agreement_intervals["polite"] == wilson(3, 5, 0.8)
    diffs = [0.0, 0.5, 0.0, 0.5, 0.0]
    assert n.gap_interval == t_interval(5, sum(diffs), sum(d * d for d in diffs), 0.8)
    assert w.gap_ci is not None and n.gap_ci is not None
    assert w.gap_ci[0] < n.gap_ci[0] < n.gap_ci[1] < w.gap_ci[1]


def test_a_bad_level_names_the_argument() -> None:
    shape = trl_reward(RUBRIC, judge=WordJudge()).rewarder.shape
    with pytest.raises(ValueError, match="the watch's level must be between 0 and 1"):
        RewardWatch(WordJudge(), rubric=RUBRIC, shape=shape, train_judge=None, fraction=1.0,
                    level=95)  # fmt: skip
    ok = RewardWatch(WordJudge(), rubric=RUBRIC, shape=shape, train_judge=None, fraction=1.0,
                     level=0.9)  # fmt: skip
    assert ok.level == 0.9


class Flattered(WordJudge):
    """The training judge: every key met, whatever the draft says."""

    def __init__(self) -> None:
        super().__init__("trainee", unmet_word="\0never")


def _run(per_step: int, odd: int, steps: int = 4) -> tuple[Any, list[warnings.WarningMessage]]:
    """``steps`` steps of ``per_step`` rollouts; from step 1 on the audit judge finds
    ``odd`` of them impolite (a disagreement of 0.5 each) and the training judge none."""
    reward = trl_reward(RUBRIC, judge=Flattered(), audit=WordJudge("audit", "odd"),
                        audit_fraction=1.0)  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(steps):
            bad = odd if n else 0
            _step(reward, n, [f"hi odd {i}" if i < bad else f"hi {i}" for i in range(per_step)])
    return reward.watch, [w for w in caught if issubclass(w.category, GradeloopWarning)]


def test_a_gap_the_evidence_shows_warns() -> None:
    watch, caught = _run(per_step=30, odd=10)
    step = watch.steps[1]
    assert step.gap == pytest.approx(1 / 6) and step.trend is not None and step.trend > 0
    assert step.gap_ci[0] > 0  # ten rollouts in thirty: not the sample's noise
    assert step.widening and len(caught) == 1
    message = str(caught[0].message)
    assert "95 % interval" in message and f"{step.gap_ci[0]:+.3f}" in message


def test_the_same_gap_on_too_few_rollouts_stays_quiet() -> None:
    watch, caught = _run(per_step=3, odd=1)
    for step in watch.steps[1:]:
        # what the rule without intervals warned on: the gap >= 0.1 and trending up
        assert step.gap == pytest.approx(1 / 6) and step.trend > 0 and step.gap >= 0.1
        assert step.gap_interval.contains(0.0)  # one rollout in three: could be noise
        assert not step.widening
    assert caught == []


def test_one_audited_rollout_is_no_evidence() -> None:
    watch, caught = _run(per_step=1, odd=1)
    assert watch.steps[1].gap == 0.5 and watch.steps[1].trend == 0.5
    assert watch.steps[1].gap_ci is None and not any(s.widening for s in watch.steps)
    assert caught == []


def test_the_intervals_reach_trl_the_history_and_the_report(tmp_path: Any) -> None:
    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        reward = trl_reward(RUBRIC, judge=Flattered(), audit=WordJudge("audit", "odd"),
                            audit_fraction=1.0, store=store, name="odd-run")  # fmt: skip
        for n in range(3):
            _step(reward, n, [f"hi odd {i}" if i < n + 1 else f"hi {i}" for i in range(6)])
        step = reward.watch.steps[-1]
        metrics = reward.steps[-1].metrics()
        assert [metrics["gradeloop/audit/gap_ci_low"], metrics["gradeloop/audit/gap_ci_high"]] == (
            step.gap_ci
        )
        agreement = [
            metrics["gradeloop/audit/agreement/polite_ci_low"],
            metrics["gradeloop/audit/agreement/polite_ci_high"],
        ]
        assert agreement == step.agreement_ci("polite")
        figures = store.grading_run(step.run_id)["config"]["reward_watch"]
        assert figures["gap_ci"] == [round(x, 4) for x in step.gap_ci]
        assert figures["agreement_ci"] == {
            "polite": [round(x, 4) for x in step.agreement_ci("polite")]
        }
        assert figures["level"] == 0.95
    html = render_report(db=db)
    assert html.count('class="point gap"') == 3 and html.count('class="bar"') == 3
    low, high = figures["gap_ci"]
    assert f"{figures['gap']:+.3f} [{low:+.3f}, {high:+.3f}]" in html  # the table's cell


def test_steps_recorded_without_intervals_are_drawn_without_bars() -> None:
    html = str(watch_section("old", [{"step": 0, "gap": 0.2}, {"step": 1, "gap": 0.3}]))
    assert html.count('class="point gap"') == 2 and 'class="bar"' not in html
    assert "+0.300" in html and "[" not in html.split("<table")[1]
