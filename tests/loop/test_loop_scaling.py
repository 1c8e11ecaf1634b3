"""Long loops stay linear: no round re-reads the whole history.

Regression guards with generous bounds (the benchmarks in benchmarks/ give the
figures): each of these took seconds, growing with the square of the rounds,
before the loop kept running totals.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from gradeloop import Criterion, Rubric, Verdict, run_loop
from gradeloop.grading import Registry
from gradeloop.models import CallRecord, Usage, record_call

RUBRIC = {"criteria": [{"key": "tone", "description": "Warm.", "scale": "score"}]}


class Judge:
    """Scores from a list (the last repeats), and reports 550 tokens a call."""

    def __init__(self, scores: Sequence[int] = (5,)) -> None:
        self.scores, self.n = list(scores), 0

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        record_call(CallRecord("evaluate", "m", "end_turn", Usage(500, 50), 1.0))
        score = self.scores[min(self.n, len(self.scores) - 1)]
        self.n += 1
        return Verdict(
            reasoning="r",
            criteria_met={"tone": False},
            passed=False,
            issues=["warmer"],
            scores={"tone": score},
        )


class Gen:
    """Distinct drafts (after an optional common prefix); 700 tokens a call."""

    def __init__(self, prefix: str = "", texts: Sequence[str] = ()) -> None:
        self.prefix, self.texts, self.n = prefix, list(texts), 0

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        record_call(CallRecord("generate", "m", "end_turn", Usage(300, 400), 1.0))
        self.n += 1
        if self.texts:
            return self.texts[(self.n - 1) % len(self.texts)]
        return f"{self.prefix}draft {self.n:06d}"  # one length: == must read to the end


@pytest.fixture
def rubric() -> Rubric:
    return Rubric.from_dict(RUBRIC, registry=Registry(autoload=False))


def loop(rubric: Rubric, rounds: int, gen: Gen | None = None, **kw: Any) -> Any:
    kw.setdefault("stagnation_rounds", 0)
    return run_loop(
        "t",
        rubric,
        generator=gen or Gen(),
        judge=Judge(),
        max_rounds=rounds,
        similarity=None,
        **kw,
    )


def cpu(fn: Any) -> tuple[Any, float]:
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def test_a_token_budget_keeps_a_running_total(rubric: Rubric) -> None:
    # 2,000 rounds re-adding the history twice a round took ~12 s of CPU; now ~0.3 s.
    result, took = cpu(lambda: loop(rubric, 2000, token_budget=10**12, reuse_identical=False))
    assert result.stop_reason == "max_rounds" and len(result.history) == 2000
    assert took < 3.0
    assert result.usage == Usage(2000 * 800, 2000 * 450)


def test_the_budget_still_stops_at_the_right_round(rubric: Rubric) -> None:
    # 1,250 tokens a round: over 10,000 after the 8th evaluation, not before
    result = loop(rubric, 50, token_budget=10_000)
    assert result.stop_reason == "token_budget" and len(result.history) == 8


def test_identical_drafts_are_found_by_hash(rubric: Rubric) -> None:
    # 1,500 distinct drafts sharing a 48 KB start: comparing each with every earlier
    # one read 54 GB (~5 s of CPU); one dict lookup a round hashes each draft once.
    gen = Gen(prefix="x" * 48_000)
    result, took = cpu(lambda: loop(rubric, 1500, gen, reuse_identical=True))
    assert len(result.history) == 1500 and not any(it.reused_from for it in result.history)
    assert took < 3.0


def test_a_repeated_draft_reuses_the_first_judged_twin(rubric: Rubric) -> None:
    judge = Judge()
    result = run_loop(
        "t",
        rubric,
        generator=Gen(texts=["a", "b", "a", "b", "c"]),
        judge=judge,
        max_rounds=5,
        stagnation_rounds=0,
        similarity=None,
    )
    reused = [it.reused_from for it in result.history]
    first_a, first_b = result.history[0].output_id, result.history[1].output_id
    assert reused == [None, None, first_a, first_b, None]
    assert judge.n == 3  # "a", "b" and "c" judged once each
    assert result.history[2].evaluation_usage == Usage()  # a reuse costs nothing


@pytest.mark.parametrize(
    ("scores", "rounds"),
    [
        ((5, 6, 6, 6, 9), 4),  # no gain over the best before the last 2: stop after round 4
        ((5, 6, 7, 8, 9), 5),  # each round improves: the cap decides
        ((9, 1, 2, 3, 4), 3),  # the best is before the window
    ],
)
def test_stagnation_compares_the_window_with_the_best_before_it(
    rubric: Rubric, scores: tuple[int, ...], rounds: int
) -> None:
    result = run_loop(
        "t",
        rubric,
        generator=Gen(),
        judge=Judge(scores),
        max_rounds=5,
        stagnation_rounds=2,
        similarity=None,
    )
    assert len(result.history) == rounds
