from __future__ import annotations

from typing import Any

import pytest

from gradeloop import CheckResult, Rubric, grade
from gradeloop.errors import JudgeError, JudgeRequiredError
from gradeloop.grading import Registry
from tests.support.fakes import AllMet, FakeJudge, verdict


def word_limit(text: str, *, max_words: int = 5) -> CheckResult:
    n = len(text.split())
    return CheckResult(n <= max_words, [] if n <= max_words else [f"{n} words > {max_words}"])


def explode(text: str) -> CheckResult:
    raise RuntimeError("checker bug")


def quality(text: str) -> CheckResult:
    return CheckResult(True, score=min(10.0, float(len(text))))


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.add("word_limit", word_limit)
    r.add("explode", explode)
    r.add("quality", quality)
    return r


def rubric(reg: Registry, *criteria: dict[str, Any], pass_score: float | None = None) -> Rubric:
    return Rubric.from_dict({"criteria": list(criteria), "pass_score": pass_score}, registry=reg)


SHORT = {"key": "short", "description": "At most 5 words.", "checker": "word_limit"}
TONE = {"key": "tone", "description": "Polite."}
FACTS = {"key": "facts", "description": "No invention."}


def test_judge_is_asked_only_about_its_own_keys(reg: Registry) -> None:
    judge = AllMet()
    ev = grade(
        "one two three", rubric(reg, SHORT, TONE, FACTS), task="t", judge=judge, registry=reg
    )
    assert judge.asked == [["tone", "facts"]]
    assert ev.accepted is True
    assert ev.verdict.criteria_met == {"short": True, "tone": True, "facts": True}
    assert [c.source for c in ev.criteria] == ["code", "judge", "judge"]
    assert ev.criteria[0].filled_by == "word_limit"


def test_code_only_rubric_needs_no_judge(reg: Registry) -> None:
    ev = grade("one two", rubric(reg, SHORT), registry=reg)
    assert ev.accepted is True and ev.judge_called is False
    assert ev.overall_score == 10.0


def test_judge_keys_without_a_judge_is_an_error_naming_them(reg: Registry) -> None:
    with pytest.raises(JudgeRequiredError, match="tone, facts"):
        grade("x", rubric(reg, SHORT, TONE, FACTS), registry=reg)


def test_skip_judge_marks_judge_keys_not_checked_never_passed(reg: Registry) -> None:
    ev = grade("one two", rubric(reg, SHORT, TONE), skip_judge=True, registry=reg)
    assert ev.accepted is False
    assert ev.not_checked == ("tone",)
    assert ev.verdict.criteria_met == {"short": True, "tone": False}


def test_a_missing_judge_key_fails(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"tone": True}))
    ev = grade("one", rubric(reg, SHORT, TONE, FACTS), judge=judge, registry=reg)
    assert ev.accepted is False
    assert ev.verdict.criteria_met["facts"] is False
    assert any("no verdict on 'facts'" in i for i in ev.verdict.issues)


def test_the_judges_claim_about_a_code_key_is_ignored(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"tone": True, "short": True}))
    ev = grade("one two three four five six", rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.verdict.criteria_met["short"] is False
    assert ev.accepted is False
    assert "short: 6 words > 5" in ev.verdict.issues


def test_the_judges_passed_false_blocks_acceptance(reg: Registry) -> None:
    judge = FakeJudge(verdict(False, {"tone": True}, issues=["be warmer"]))
    ev = grade("one", rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.accepted is False and "be warmer" in ev.verdict.issues


def test_a_raising_checker_is_a_failed_criterion_with_the_error(reg: Registry) -> None:
    ev = grade(
        "x", rubric(reg, {"key": "boom", "description": "d", "checker": "explode"}), registry=reg
    )
    assert ev.accepted is False
    assert ev["boom"].issues == ("checker 'explode' raised RuntimeError: checker bug",)


def test_seed_003_weighted_overall(reg: Registry) -> None:
    r = rubric(
        reg,
        {"key": "clarity", "description": "c", "scale": "score", "weight": 0.3},
        {"key": "persuasiveness", "description": "p", "scale": "score", "weight": 0.4},
        {"key": "technical_accuracy", "description": "t", "scale": "score", "weight": 0.3},
    )
    judge = FakeJudge(
        verdict(True, {}, scores={"clarity": 8, "persuasiveness": 6, "technical_accuracy": 9})
    )
    ev = grade("draft", r, judge=judge, registry=reg)
    assert ev.overall_score == pytest.approx(7.5)
    assert [c.passed for c in ev.criteria] == [True, False, True]
    assert ev.accepted is False
    data = ev.to_json()
    assert data["overall_score"] == 7.5 and data["passed"] is False
    assert data["criteria"][1] == {
        "name": "persuasiveness",  # the seed's four fields...
        "weight": 0.4,
        "score": 6.0,
        "passed": False,
        "filled_by": "judge",  # ...and who filled it, how it came out, and why
        "status": "failed",
        "issues": ["scored 6, needs 7"],
    }


def test_scored_met_is_decided_in_code_not_by_the_judges_boolean(reg: Registry) -> None:
    r = rubric(reg, {"key": "p", "description": "p", "scale": "score", "threshold": 8})
    lying = FakeJudge(verdict(True, {"p": True}, scores={"p": 7}))
    assert grade("d", r, judge=lying, registry=reg).accepted is False
    honest = FakeJudge(verdict(True, {"p": False}, scores={"p": 8}))
    assert grade("d", r, judge=honest, registry=reg).accepted is True


def test_out_of_range_scores_are_invalid_and_missing_ones_fail(reg: Registry) -> None:
    r = rubric(reg, {"key": "p", "description": "p", "scale": "score"})
    for bad in (42, 11, 0, 7.5):
        with pytest.raises(JudgeError, match=r"scores\.p") as info:
            grade("d", r, judge=FakeJudge(verdict(True, {}, scores={"p": bad})), registry=reg)
        assert info.value.reason == "invalid"
    ev = grade("d", r, judge=FakeJudge(verdict(True, {}, scores={"p": 10})), registry=reg)
    assert ev["p"].score == 10.0 and ev.accepted is True  # the twin, at the top of the scale
    ev = grade("d", r, judge=FakeJudge(verdict(True, {}, scores={})), registry=reg)
    assert ev.accepted is False and "no score for 'p'" in ev["p"].issues[0]


def test_pass_score_must_also_be_reached(reg: Registry) -> None:
    r = rubric(reg, {"key": "p", "description": "p", "scale": "score"}, TONE, pass_score=9)
    low = FakeJudge(verdict(True, {"tone": True}, scores={"p": 7}))
    ev = grade("d", r, judge=low, registry=reg)
    assert ev.overall_score == 8.5 and ev.accepted is False
    assert any("below the rubric's pass_score 9" in i for i in ev.verdict.issues)
    high = FakeJudge(verdict(True, {"tone": True}, scores={"p": 8}))
    assert grade("d", r, judge=high, registry=reg).accepted is True


def test_a_code_checker_can_fill_a_scored_key(reg: Registry) -> None:
    r = rubric(reg, {"key": "q", "description": "q", "checker": "quality", "scale": "score"})
    assert grade("abcdefg", r, registry=reg).accepted is True  # score 7
    assert grade("abc", r, registry=reg).accepted is False  # score 3


def test_judge_failures_become_judge_errors_never_passes(reg: Registry) -> None:
    r = rubric(reg, TONE)
    with pytest.raises(JudgeError) as info:
        grade("d", r, judge=FakeJudge(RuntimeError("overloaded")), registry=reg)
    assert info.value.reason == "api_error" and "overloaded" in str(info.value)

    class ReturnsJunk:
        def evaluate(self, task: str, draft: str, criteria: object) -> object:
            return {"passed": True}

    with pytest.raises(JudgeError) as info:
        grade("d", r, judge=ReturnsJunk(), registry=reg)  # type: ignore[arg-type]
    assert info.value.reason == "invalid"


def test_a_dict_verdict_is_accepted(reg: Registry) -> None:
    class DictJudge:
        def evaluate(self, task: str, draft: str, criteria: object) -> object:
            return {"reasoning": "", "criteria_met": {"tone": True}, "passed": True, "issues": []}

    assert grade("d", rubric(reg, TONE), judge=DictJudge(), registry=reg).accepted  # type: ignore[arg-type]


def test_grade_takes_a_plain_dict_rubric(reg: Registry) -> None:
    ev = grade("a b", {"criteria": [SHORT]}, registry=reg)
    assert ev.accepted is True
