"""Rollouts graded one at a time as they finish: the cap, sharing, failures."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from gradeloop import Criterion, Verdict
from gradeloop.errors import JudgeError
from gradeloop.rewards import Rollout, verl_reward
from gradeloop.rewards._scorer import RewardScorer
from tests.rewards.fakes import RUBRIC, WordJudge


class SlowJudge:
    """An async judge that takes a while and counts how many requests overlap."""

    model = "slow"

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay
        self.in_flight = 0
        self.most = 0
        self.asked: list[str] = []

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        raise AssertionError("the async path awaits aevaluate")

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.asked.append(draft)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        if "fail" in draft:
            raise JudgeError("overloaded", reason="api_error")
        return Verdict(
            reasoning="ok", criteria_met={c.key: True for c in criteria}, passed=True, issues=[]
        )


def _run(scorer: RewardScorer, drafts: list[str]) -> list[Any]:
    async def many() -> list[Any]:
        return await asyncio.gather(*(scorer.aone(Rollout("t", d)) for d in drafts))

    return asyncio.run(many())


def test_at_most_concurrency_gradings_are_in_flight() -> None:
    judge = SlowJudge()
    scorer = RewardScorer(RUBRIC, judge, concurrency=3)
    out = _run(scorer, [f"hello {i}" for i in range(12)])
    assert all(e.accepted for e in out)
    assert judge.most == 3  # the cap is reached and never passed


def test_an_identical_rollout_in_flight_is_awaited_not_asked_again() -> None:
    judge = SlowJudge()
    scorer = RewardScorer(RUBRIC, judge, concurrency=8)
    out = _run(scorer, ["hello", "hello", "hello", "other"])
    assert sorted(judge.asked) == ["hello", "other"]
    assert out[0] is out[1] is out[2]
    _run(scorer, ["hello"])  # done: a later one is graded again (the cache is the judge's)
    assert judge.asked.count("hello") == 2


def test_a_judge_failure_is_the_rollouts_failed_evaluation() -> None:
    scorer = RewardScorer(RUBRIC, SlowJudge(), concurrency=2)
    failed, ok = _run(scorer, ["please fail", "hello"])
    assert failed.judge_error is not None and "overloaded" in failed.judge_error
    assert failed["short"].passed and not failed["polite"].passed  # code keys still graded
    assert ok.judge_error is None and ok.accepted


class SyncOnly(WordJudge):
    """A judge whose async side must not be used."""

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        raise AssertionError("the blocking form asks the judge's sync side")


def test_the_blocking_form_grades_on_the_judges_sync_side() -> None:
    judge = SyncOnly()
    compute_score = verl_reward(RUBRIC, judge=judge)
    assert compute_score("src", "hello", "", {})["score"] == 1.0
    failed = compute_score("src", "please fail", "", {})
    assert failed["judge_ok"] == 0.0 and failed["short"] == 1.0 and "api_error" in failed["error"]
    assert judge.drafts == ["hello", "please fail"]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_concurrency_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(ValueError, match="concurrency must be an integer >= 1"):
        RewardScorer(RUBRIC, SlowJudge(), concurrency=bad)
