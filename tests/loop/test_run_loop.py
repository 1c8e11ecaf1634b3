"""run_loop and arun_loop: weighted scores, stagnation, judge failure, return policies,
budgets, each test through both drivers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from gradeloop import LoopResult, Rubric, Verdict, arun_loop, run_loop
from gradeloop.errors import InputError, JudgeError
from gradeloop.grading import Registry
from gradeloop.models import CallRecord, Usage, record_call
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

HEADPHONES = {
    "criteria": [
        {"key": "clarity", "description": "Clear.", "scale": "score", "weight": 0.3},
        {"key": "persuasiveness", "description": "Persuasive.", "scale": "score", "weight": 0.4},
        {"key": "technical_accuracy", "description": "Accurate.", "scale": "score", "weight": 0.3},
    ]
}


@pytest.fixture
def headphones() -> Rubric:
    return Rubric.from_dict(HEADPHONES, registry=Registry(autoload=False))


def scored(c: float, p: float, t: float, issues: tuple[str, ...] = ("more emotion",)) -> Verdict:
    return verdict(
        True, {}, issues=issues, scores={"clarity": c, "persuasiveness": p, "technical_accuracy": t}
    )


Loop = Callable[..., LoopResult]


@pytest.fixture(params=["run_loop", "arun_loop"])
def loop(request: pytest.FixtureRequest) -> Loop:
    """Each test runs through both drivers of the loop's one flow."""
    if request.param == "run_loop":
        return run_loop
    return lambda *a, **kw: asyncio.run(arun_loop(*a, **kw))


def run(
    loop: Loop, rubric: Rubric, script: list[Any], texts: list[str] | None = None, **kw: Any
) -> tuple[Any, FakeGenerator, FakeJudge, list[str]]:
    calls: list[str] = []
    gen = FakeGenerator(texts, calls=calls)
    judge = FakeJudge(*script, calls=calls)
    result = loop(
        "Write a product description for a wireless headphone",
        rubric,
        generator=gen,
        judge=judge,
        **kw,
    )
    return result, gen, judge, calls


def test_seed_003_few_shot(loop: Loop, headphones: Rubric) -> None:
    # scores are integers 1-10 on every road (8, 10, 8 weigh to the seed's 8.8)
    result, _, _, calls = run(loop, headphones, [scored(8, 6, 9), scored(8, 10, 8, ())])
    assert result.passed is True and result.stop_reason == "passed"
    assert result.draft == "d1"
    first, second = (it.evaluation for it in result.history)
    assert first is not None and second is not None
    assert first.to_json()["overall_score"] == 7.5
    assert "improvement_from_previous" not in first.to_json()
    assert second.to_json()["overall_score"] == 8.8
    assert second.to_json()["improvement_from_previous"] == 1.3
    data = result.to_json()
    assert data["improvement_trajectory"] == [7.5, 8.8]
    assert data["final_output_id"] == result.history[1].output_id
    assert set(data) >= {
        "loop_id",
        "iterations",
        "final_output_id",
        "total_time_ms",
        "improvement_trajectory",
    }
    assert data["iterations"][0]["evaluation"] == {"overall_score": 7.5, "passed": False}
    assert data["iterations"][0]["feedback"] == (
        "- more emotion\n- persuasiveness: scored 6, needs 7"
    )
    assert calls == ["generate", "evaluate"] * 2


def test_stagnation_returns_the_best_earlier_draft_and_no_generate_follows(
    loop: Loop, headphones: Rubric
) -> None:
    script = [scored(6, 6, 6), scored(8, 6, 8), scored(7, 6, 7), scored(6, 6, 6), scored(9, 9, 9)]
    result, _, _, calls = run(loop, headphones, script, max_rounds=5)
    assert result.stop_reason == "stagnation"
    assert result.draft == "d1" and result.passed is False  # 7.2; then 6.6, 6.0 never beat it
    assert calls == ["generate", "evaluate"] * 4
    assert calls[-1] == "evaluate"


def test_stagnation_can_be_turned_off(loop: Loop, headphones: Rubric) -> None:
    script = [scored(6, 6, 6), scored(8, 6, 8), scored(7, 6, 7), scored(6, 6, 6), scored(9, 9, 9)]
    result, *_ = run(loop, headphones, script, max_rounds=5, stagnation_rounds=0)
    assert result.stop_reason == "passed" and result.draft == "d4"


def test_a_revision_identical_to_the_draft_stops_without_a_second_judgement(
    loop: Loop, headphones: Rubric
) -> None:
    result, _, _, calls = run(
        loop, headphones, [scored(6, 6, 6)] * 3, texts=["same", "same"], max_rounds=3
    )
    assert result.stop_reason == "stagnation"
    assert calls == ["generate", "evaluate", "generate"]  # the twin's verdict is reused
    second = result.history[1]
    assert second.reused_from == result.history[0].output_id
    assert second.evaluation is not None and second.evaluation.output_id == second.output_id
    assert result.to_json()["iterations"][1]["evaluation"]["overall_score"] == 6.0


def test_a_nearly_identical_revision_is_judged_then_stops(loop: Loop, headphones: Rubric) -> None:
    text = "word " * 300
    result, _, _, calls = run(
        loop, headphones, [scored(6, 6, 6)] * 3, texts=[text, text + "extra"], max_rounds=3
    )
    assert result.stop_reason == "stagnation"
    assert calls == ["generate", "evaluate"] * 2


def test_a_different_revision_goes_on(loop: Loop, headphones: Rubric) -> None:
    # the twin of the two above: real changes are not mistaken for stagnation
    script = [scored(6, 6, 6), scored(6.5, 6.5, 6.5), scored(8, 8, 8)]
    result, _, _, calls = run(
        loop, headphones, script, texts=["first text", "second, rewritten", "third version"]
    )
    assert result.stop_reason == "passed" and len(calls) == 6


def test_judge_failure_in_round_one_stops_at_once(loop: Loop, headphones: Rubric) -> None:
    failure = JudgeError("the judge refused", reason="refusal")
    result, _, _, calls = run(loop, headphones, [failure, scored(9, 9, 9)])
    assert result.stop_reason == "evaluator_failed"
    assert result.passed is False and result.draft == "d0"
    assert calls == ["generate", "evaluate"]
    assert result.history[0].judge_error == "refusal: the judge refused"
    assert result.to_json()["iterations"][0]["evaluation"]["overall_score"] is None


def test_judge_failure_later_revises_on_the_last_valid_issues(
    loop: Loop, headphones: Rubric
) -> None:
    script = [
        scored(6, 6, 6, ("be concrete",)),
        RuntimeError("HTTP 529 overloaded"),
        scored(9, 9, 9, ()),
    ]
    result, gen, _, calls = run(loop, headphones, script)
    assert result.stop_reason == "passed" and result.draft == "d2"
    assert gen.prompts[2]["issues"][0] == "be concrete"  # not the API error
    assert "529" not in str(gen.prompts[2])
    assert result.history[1].judge_error is not None
    assert calls == ["generate", "evaluate"] * 3


def test_a_draft_whose_evaluation_failed_is_never_returned(loop: Loop, headphones: Rubric) -> None:
    script = [scored(6, 6, 6), scored(5, 5, 5), JudgeError("cut off", reason="max_tokens")]
    for policy in ("best", "last"):
        result, *_ = run(loop, headphones, list(script), return_policy=policy)
        assert result.stop_reason == "max_rounds"
        assert result.draft != "d2" and result.passed is False
    best, *_ = run(loop, headphones, list(script), return_policy="best")
    last, *_ = run(loop, headphones, list(script), return_policy="last")
    assert best.draft == "d0" and last.draft == "d1"


def test_two_judge_failures_in_a_row_stop_the_loop(loop: Loop, headphones: Rubric) -> None:
    script = [scored(6, 6, 6), RuntimeError("down"), RuntimeError("down"), scored(9, 9, 9)]
    result, _, _, calls = run(loop, headphones, script, max_rounds=5)
    assert result.stop_reason == "evaluator_failed"
    assert result.draft == "d0" and len(calls) == 6


def test_return_policy_best_vs_last(loop: Loop, headphones: Rubric) -> None:
    script = [scored(6, 6, 6), scored(8, 6, 8), scored(5, 5, 5)]
    best, *_ = run(loop, headphones, list(script), stagnation_rounds=0)
    last, *_ = run(loop, headphones, list(script), stagnation_rounds=0, return_policy="last")
    assert (best.draft, best.stop_reason) == ("d1", "max_rounds")
    assert last.draft == "d2"
    assert best.evaluation is not None and best.evaluation.overall_score == pytest.approx(7.2)


def test_best_breaks_ties_toward_the_latest(loop: Loop, headphones: Rubric) -> None:
    result, *_ = run(loop, headphones, [scored(6, 6, 6)] * 3, stagnation_rounds=0)
    assert result.draft == "d2"


def test_a_pass_returns_at_once_even_if_an_earlier_one_scored_higher(loop: Loop) -> None:
    reg = Registry(autoload=False)
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {"key": "s", "description": "s", "scale": "score", "threshold": 5},
                {"key": "ok", "description": "ok"},
            ]
        },
        registry=reg,
    )
    script = [
        verdict(False, {"ok": False}, scores={"s": 10}, issues=["x"]),
        verdict(True, {"ok": True}, scores={"s": 6}),
    ]
    result, *_ = run(loop, rubric, script)
    assert result.passed is True and result.draft == "d1"


class MeteredGenerator(FakeGenerator):
    """A fake that records usage like the Anthropic classes do."""

    def __init__(self, tokens: int) -> None:
        super().__init__()
        self.tokens = tokens

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        text = super().generate(task, draft, issues)
        record_call(
            CallRecord(
                "generate",
                "m",
                "end_turn",
                Usage(input_tokens=self.tokens, output_tokens=self.tokens),
                1.0,
            )
        )
        return text


def test_token_budget_stops_after_an_evaluation(loop: Loop, headphones: Rubric) -> None:
    gen = MeteredGenerator(tokens=600)
    judge = FakeJudge(*[scored(6, 6, 6)] * 5)
    result = loop(
        "t",
        headphones,
        generator=gen,
        judge=judge,
        max_rounds=5,
        stagnation_rounds=0,
        token_budget=2000,
    )
    assert result.stop_reason == "token_budget"
    assert len(result.history) == 2  # 1200 after d0, 2400 after d1: stop before d2
    assert result.passed is False
    assert result.usage.output_tokens == 1200


def test_no_budget_means_the_cap_decides(loop: Loop, headphones: Rubric) -> None:
    gen = MeteredGenerator(tokens=600)
    judge = FakeJudge(*[scored(6, 6, 6)] * 5)
    result = loop("t", headphones, generator=gen, judge=judge, max_rounds=3, stagnation_rounds=0)
    assert result.stop_reason == "max_rounds" and len(result.history) == 3


def test_time_budget(loop: Loop, headphones: Rubric) -> None:
    result, *_ = run(
        loop, headphones, [scored(6, 6, 6)] * 5, max_rounds=5, stagnation_rounds=0, time_budget=1e-9
    )
    assert result.stop_reason == "time_budget" and len(result.history) == 1


def test_a_failing_revision_keeps_the_judged_draft(loop: Loop, headphones: Rubric) -> None:
    class FlakyGenerator(FakeGenerator):
        def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
            if draft:
                raise RuntimeError("model overloaded")
            return super().generate(task, draft, issues)

    result = loop("t", headphones, generator=FlakyGenerator(), judge=FakeJudge(scored(6, 6, 6)))
    assert result.stop_reason == "generator_failed"
    assert result.draft == "d0" and result.passed is False
    assert result.error is not None and "model overloaded" in result.error


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"max_rounds": "3"}, "max_rounds"),
        ({"return_policy": "first"}, "return_policy"),
        ({"stagnation_rounds": -1}, "stagnation_rounds"),
        ({"token_budget": 0}, "token_budget"),
    ],
)
def test_bad_settings_are_named(
    loop: Loop, headphones: Rubric, kw: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(InputError, match=fragment):
        loop("t", headphones, generator=FakeGenerator(), judge=FakeJudge(), **kw)
