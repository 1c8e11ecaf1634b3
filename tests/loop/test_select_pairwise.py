"""select="pairwise": the loop compares its best two drafts when their scores are close,
keeping every loop invariant. Plain fakes; the call sequence is checked exactly."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from gradeloop import Criterion, HistoryStore, Verdict, arun_loop, run_loop
from gradeloop.errors import InputError
from gradeloop.loop import Iteration
from gradeloop.loop._select import select_draft
from gradeloop.models import Usage
from tests.support.fakes import FakeGenerator

RUBRIC = {
    "criteria": [{"key": "quality", "description": "Good.", "scale": "score", "threshold": 9}]
}
MIXED = {
    "criteria": [
        *RUBRIC["criteria"],
        {"key": "brief", "description": "Brief.", "checker": "length", "options": {"max_words": 1}},
    ]
}


class ScriptedJudge:
    """Scores each draft from a table; prefers the draft named ``favourite`` (a tie when
    it is neither, or always ``position`` when given); records every call in ``calls``."""

    def __init__(
        self,
        scores: dict[str, float],
        calls: list[str],
        *,
        favourite: str | None = None,
        position: str | None = None,
        fail: bool = False,
    ) -> None:
        self.scores, self.calls = scores, calls
        self.favourite, self.position, self.fail = favourite, position, fail
        self.model = "judge-x"

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.calls.append("evaluate")
        score = self.scores[draft]
        return Verdict(
            reasoning="r",
            criteria_met={"quality": score >= 9},
            passed=score >= 9,
            issues=[] if score >= 9 else ["quality: weak"],
            scores={"quality": score},
        )

    def prefer(self, task: str, first: str, second: str, criteria: Sequence[Criterion]) -> Any:
        self.calls.append(f"prefer:{first}>{second}")
        if self.fail:
            raise RuntimeError("prefer failed")
        if self.position is not None:
            choice = self.position
        else:
            choice = (
                "first"
                if first == self.favourite
                else "second"
                if second == self.favourite
                else "tie"
            )
        return {c.key: choice for c in criteria}


def loop(judge: ScriptedJudge, calls: list[str], rubric: Any = RUBRIC, **kw: Any) -> Any:
    kw.setdefault("max_rounds", 3)
    return run_loop(
        "write",
        rubric,
        generator=FakeGenerator(calls=calls),
        judge=judge,
        stagnation_rounds=0,
        select="pairwise",
        **kw,
    )


SCORES = {"d0": 7.0, "d1": 8.0, "d2": 6.0}  # d1 best, d0 within a point of it


def test_the_earlier_draft_returned_when_it_wins_the_comparison() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge(SCORES, calls, favourite="d0"), calls)
    assert result.draft == "d0" and result.passed is False
    assert result.evaluation.overall_score == 7.0  # the returned draft's own evaluation
    assert calls == ["generate", "evaluate"] * 3 + ["prefer:d0>d1", "prefer:d1>d0"]
    assert result.selection.reason == "the earlier draft won the comparison"
    assert result.selection.preference.by_key == {"quality": "a"}
    assert result.to_json()["selection"]["chosen_output_id"] == result.output_id


def test_the_later_draft_returned_when_it_wins() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge(SCORES, calls, favourite="d1"), calls)
    assert result.draft == "d1" and result.selection.preference.winner == "b"


def test_an_inconsistent_answer_is_a_tie_and_keeps_the_earlier_draft() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge(SCORES, calls, position="first"), calls)
    assert result.draft == "d0"  # the score alone would return d1
    assert result.selection.preference.inconsistent == ("quality",)
    assert "kept the earlier draft" in result.selection.reason


def test_a_failed_comparison_keeps_the_scores_choice() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge(SCORES, calls, fail=True), calls)
    assert result.draft == "d1" and result.selection.preference is None
    assert "prefer failed" in result.selection.error


def test_no_comparison_when_the_scores_are_further_apart_than_the_margin() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge(SCORES, calls, favourite="d0"), calls, select_margin=0.5)
    assert result.draft == "d1" and result.selection is None
    assert calls == ["generate", "evaluate"] * 3  # not one request more


def test_a_passing_draft_returns_at_once_without_a_comparison() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge({"d0": 8.0, "d1": 9.0}, calls, favourite="d0"), calls)
    assert result.passed and result.draft == "d1" and result.stop_reason == "passed"
    assert calls == ["generate", "evaluate"] * 2


def test_an_accepted_draft_is_never_dropped_for_an_unaccepted_one() -> None:
    # The loop stops at a pass, so build the state by hand: an accepted draft scored 7
    # beside a higher-scoring unaccepted one, and a judge that would prefer the latter.
    calls: list[str] = []
    judge = ScriptedJudge({"ok": 7.0, "no": 8.0}, calls, favourite="no")

    class Run:
        settings = type(
            "S", (), {"select": "pairwise", "return_policy": "best", "select_margin": 1.0}
        )
        rubric = __import__("gradeloop").Rubric.from_dict(RUBRIC)
        task, selection = "t", None
        usage = Usage()

        def __init__(self) -> None:
            from gradeloop import grade

            self.judge = judge
            ok = grade("ok", RUBRIC, judge=judge)
            ok = dataclasses.replace(ok, accepted=True)
            self.history = [
                Iteration(1, "o1", "ok", 0.0, evaluation=ok),
                Iteration(2, "o2", "no", 0.0, evaluation=grade("no", RUBRIC, judge=judge)),
            ]

        def choose(self) -> Iteration:
            return self.history[0]  # accepted first, as the best-of rank does

    run = Run()
    assert select_draft(run, "max_rounds").content == "ok"  # type: ignore[arg-type]
    assert not any(c.startswith("prefer") for c in calls) and run.selection is None


def test_code_keys_are_compared_from_the_evaluations_at_no_cost() -> None:
    calls: list[str] = []
    judge = ScriptedJudge({"d0": 7.0, "d1 two": 8.0}, calls, position="first")
    gen = FakeGenerator(["d0", "d1 two"], calls=calls)
    result = run_loop("w", MIXED, generator=gen, judge=judge, max_rounds=2, stagnation_rounds=0,
                      select="pairwise", select_margin=10)  # fmt: skip
    pref = result.selection.preference
    assert pref.by_key == {"quality": "tie", "brief": "a"}  # d0 meets brief (one word)
    assert result.draft == "d0"
    assert calls.count("prefer:d0>d1 two") == 1 and len([c for c in calls if "prefer" in c]) == 2


def test_identical_drafts_are_never_compared() -> None:
    calls: list[str] = []
    judge = ScriptedJudge({"x": 7.0}, calls, favourite="x")
    gen = FakeGenerator(["x", "x"], calls=calls)
    result = run_loop("w", RUBRIC, generator=gen, judge=judge, max_rounds=3, stagnation_rounds=0,
                      select="pairwise")  # fmt: skip
    assert result.stop_reason == "stagnation" and result.selection is None
    assert not any("prefer" in c for c in calls)


def test_budget_and_judge_failure_stops_are_not_followed_by_a_comparison() -> None:
    calls: list[str] = []
    result = loop(ScriptedJudge(SCORES, calls, favourite="d0"), calls, time_budget=1e-9)
    assert result.stop_reason == "time_budget" and result.selection is None


def test_the_async_loop_makes_the_same_choice() -> None:
    calls: list[str] = []
    judge = ScriptedJudge(SCORES, calls, favourite="d0")
    result = asyncio.run(
        arun_loop("write", RUBRIC, generator=FakeGenerator(calls=calls), judge=judge,
                  max_rounds=3, stagnation_rounds=0, select="pairwise")
    )  # fmt: skip
    assert result.draft == "d0" and sorted(calls[-2:]) == ["prefer:d0>d1", "prefer:d1>d0"]


def test_the_selection_is_recorded_in_the_history(tmp_path: Any) -> None:
    calls: list[str] = []
    with HistoryStore(tmp_path / "h.db") as store:
        result = loop(ScriptedJudge(SCORES, calls, favourite="d0"), calls, store=store)
        rows = store.preferences(loop_id=result.loop_id)
    assert len(rows) == 1
    row = rows[0]
    assert row["chosen_output_id"] == result.output_id and row["origin"] == "loop"
    assert row["preference"]["winner"] == "a"


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"select": "vote"}, "select must be 'score' or 'pairwise'"),
        ({"select": "pairwise", "return_policy": "last"}, "needs return_policy='best'"),
        ({"select": "pairwise", "select_margin": -1}, "select_margin"),
        ({"select": "pairwise", "select_margin": True}, "select_margin"),
    ],
)
def test_bad_selection_settings_are_input_errors(kwargs: dict[str, Any], why: str) -> None:
    with pytest.raises(InputError, match=why):
        run_loop("w", RUBRIC, generator=FakeGenerator(), judge=ScriptedJudge(SCORES, []), **kwargs)


def test_pairwise_needs_a_judge_with_prefer_only_for_judge_keys() -> None:
    class EvaluateOnly:
        def evaluate(self, *a: Any) -> Verdict: ...

    with pytest.raises(InputError, match="EvaluateOnly has none"):
        run_loop("w", RUBRIC, generator=FakeGenerator(), judge=EvaluateOnly(), select="pairwise")
    code_only = {"criteria": [MIXED["criteria"][1]]}
    result = run_loop("w", code_only, generator=FakeGenerator(), judge=None, select="pairwise")
    assert result.stop_reason == "passed"  # "d0" is one word
