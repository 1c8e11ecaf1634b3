"""One road through the grading core: every draft's result is built afresh, and the
gate (:func:`accepted`) decides every draft, whichever surface graded it.

(DESIGN.md section 10, "one road": no CriterionResult, CheckResult or Evaluation is
shared between two drafts' results, and accepted() decides every draft.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import CheckResult, Evaluation, Rubric, Verdict, agrade, grade, grade_many
from gradeloop.grading import _merge
from gradeloop.grading._issue_keys import is_about, issue_key
from gradeloop.grading._registry import Registry
from gradeloop.grading._results import CriterionResult
from gradeloop.grading._samples import combine
from gradeloop.grading._shadow import split_verdict
from gradeloop.judging import Jury
from gradeloop.judging._votes import jury_verdict
from tests.support.fakes import AllMet, verdict

SHARED_PASS = CheckResult(True)  # a plugin may well hand out one result for every pass


def has_a(text: str) -> CheckResult:
    return SHARED_PASS if "a" in text else CheckResult(False, ["no 'a'"])


def short(text: str) -> bool:
    return len(text) < 40


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.add("has_a", has_a)
    r.add("short", short)
    return r


def code_rubric(reg: Registry) -> Rubric:
    return Rubric.from_dict(
        {
            "criteria": [
                {"key": "has_a", "description": "Has an a.", "checker": "has_a"},
                {"key": "short", "description": "Short.", "checker": "short"},
            ]
        },
        registry=reg,
    )


def hybrid_rubric(reg: Registry) -> Rubric:
    data = code_rubric(reg).to_dict()
    data["criteria"].append({"key": "tone", "description": "Polite."})
    return Rubric.from_dict(data, registry=reg)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> list[Verdict]:
    """Every verdict the gate was asked about, in order."""
    asked: list[Verdict] = []
    real = _merge.accepted

    def counting(v: Verdict, keys: Any) -> bool:
        asked.append(v)
        return real(v, keys)

    monkeypatch.setattr(_merge, "accepted", counting)
    return asked


DRAFTS = ["a cat", "a dog", "a bird", "no letter here?", "a" * 50]


def test_the_gate_decides_every_code_only_draft(reg: Registry, gate: list[Verdict]) -> None:
    rubric = code_rubric(reg)
    results = [grade(d, rubric, registry=reg) for d in DRAFTS]
    assert len(gate) == len(DRAFTS)  # the three alike drafts too, not only the first
    assert [e.accepted for e in results] == [True, True, True, False, False]


def test_the_gate_decides_every_draft_of_a_batch(reg: Registry, gate: list[Verdict]) -> None:
    results = grade_many(DRAFTS, code_rubric(reg), registry=reg)
    assert len(gate) == len(DRAFTS)
    assert [e.accepted for e in results] == [True, True, True, False, False]


def test_the_gate_decides_every_judged_draft(reg: Registry, gate: list[Verdict]) -> None:
    rubric = hybrid_rubric(reg)
    graded = [grade(d, rubric, judge=AllMet(), registry=reg) for d in DRAFTS[:3]]
    graded.append(asyncio.run(agrade(DRAFTS[0], rubric, judge=AllMet(), registry=reg)))
    graded += grade_many(DRAFTS[:3], rubric, judge=AllMet(), registry=reg)
    jury = Jury([AllMet(), AllMet(), AllMet()])
    graded.append(grade(DRAFTS[0], rubric, judge=jury, registry=reg))
    assert len(gate) == len(graded) == 8
    assert all(e.accepted for e in graded)


def _objects(e: Evaluation) -> Iterator[object]:
    """Every object an evaluation holds that a caller could change or compare by identity."""
    v = e.verdict
    yield from (e, v, v.criteria_met, v.issues, v.scores, v.feedback)
    yield from e.criteria


def _assert_nothing_shared(evaluations: list[Evaluation]) -> None:
    seen: dict[int, int] = {}
    for n, e in enumerate(evaluations):
        for obj in _objects(e):
            owner = seen.setdefault(id(obj), n)
            assert owner == n, f"draft {n} shares {obj!r} with draft {owner}"


def test_alike_drafts_share_nothing(reg: Registry) -> None:
    rubric = code_rubric(reg)
    alike = [grade("a cat", rubric, registry=reg) for _ in range(3)]
    assert alike[0] == alike[1] == alike[2]  # equal values, each its own objects
    _assert_nothing_shared(alike)
    _assert_nothing_shared(grade_many(["a cat"] * 3, rubric, registry=reg))
    hybrid = hybrid_rubric(reg)
    _assert_nothing_shared([grade("a cat", hybrid, judge=AllMet(), registry=reg) for _ in "ab"])


def test_a_changed_result_changes_no_other_draft(reg: Registry) -> None:
    rubric = code_rubric(reg)
    first, second = grade("a cat", rubric, registry=reg), grade("a cat", rubric, registry=reg)
    first.verdict.issues.append("mine")
    first.verdict.criteria_met["has_a"] = False
    assert second.verdict.issues == [] and second.verdict.criteria_met["has_a"] is True


def test_a_checker_returning_a_bare_bool_or_a_shared_result_grades_the_same(
    reg: Registry,
) -> None:
    rubric = code_rubric(reg)
    e = grade("a cat", rubric, registry=reg)
    assert [c.status for c in e.criteria] == ["met", "met"]
    failing = grade("x" * 50, rubric, registry=reg)
    assert [c.status for c in failing.criteria] == ["failed", "failed"]
    assert failing["short"].issues == ("does not meet: Short.",)


# -- named constructors ------------------------------------------------------------


def test_from_check_reads_scores_against_the_threshold(reg: Registry) -> None:
    c = Rubric.from_dict(
        {"criteria": [{"key": "q", "description": "Q.", "checker": "short", "scale": "score"}]},
        registry=reg,
    )["q"]
    high = CriterionResult.from_check(c, "short", CheckResult(True, score=8))
    low = CriterionResult.from_check(c, "short", CheckResult(True, score=3))
    assert (high.passed, high.score, high.status) == (True, 8.0, "met")
    assert (low.passed, low.score, low.status) == (False, 3.0, "failed")
    assert low.issues == ("does not meet: Q.",)


@pytest.mark.parametrize("scale", ["pass_fail", "score"])
@pytest.mark.parametrize("passed", [True, False])
def test_from_check_reads_a_bare_bool_as_the_result_it_stands_for(
    reg: Registry, scale: str, passed: bool
) -> None:
    # a checker's True or False is read without building a CheckResult, and comes out
    # as CheckResult(True) / CheckResult(False) would: met or not, 10 or 0, the issue
    c = Rubric.from_dict(
        {"criteria": [{"key": "q", "description": "Q.", "checker": "short", "scale": scale}]},
        registry=reg,
    )["q"]
    bare = CriterionResult.from_check(c, "short", passed)
    built = CriterionResult.from_check(c, "short", CheckResult(passed))
    assert bare == built
    assert (bare.passed, bare.score) == (passed, 10.0 if passed else 0.0)
    assert bare.issues == (() if passed else ("does not meet: Q.",))


def test_failed_and_not_checked_say_why(reg: Registry) -> None:
    rubric = hybrid_rubric(reg)
    broken = CriterionResult.failed(rubric["short"], "gone", error="gone")
    lost = CriterionResult.failed(rubric["tone"], "no verdict")
    skipped = CriterionResult.not_checked(rubric["tone"])
    assert (broken.status, broken.source, broken.filled_by) == ("error", "code", "short")
    assert (lost.status, lost.source, lost.filled_by) == ("failed", "judge", "judge")
    assert (skipped.status, skipped.checked, skipped.passed) == ("not_checked", False, False)


# -- which key an issue is about: one reading for shadows, samples and juries -------

KEY = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@given(KEY, st.text(max_size=30), st.sampled_from(["", "- ", "* ", "`", '"', "'"]))
def test_an_issue_is_about_the_key_it_opens_with(key: str, rest: str, opening: str) -> None:
    for after in (": ", " ", "` ", '" ', "' ", ", "):
        issue = f"{opening}{key}{after}{rest}"
        assert is_about(issue, key)
        assert issue_key(issue, {key, key + "_x"}) == key


@given(KEY, st.text(max_size=30))
def test_a_longer_key_is_not_read_as_its_prefix(key: str, rest: str) -> None:
    issue = f"{key}_max: {rest}"
    assert not is_about(issue, key)
    assert issue_key(issue, {key, f"{key}_max"}) == f"{key}_max"
    assert not is_about(f"{key}-max: {rest}", key)


@given(st.text(max_size=40), st.sets(KEY, max_size=4))
def test_issue_key_and_is_about_agree(issue: str, keys: set[str]) -> None:
    found = issue_key(issue, keys)
    about = {k for k in keys if is_about(issue, k)}
    assert (found is None) == (not about)
    if found is not None:
        assert found == max(about, key=len) and len(found) == max(map(len, about))


def test_a_quoted_key_reads_the_same_in_shadows_samples_and_juries(reg: Registry) -> None:
    rubric = hybrid_rubric(reg)
    tone = rubric["tone"]
    said = '"tone" is too harsh'
    unmet = verdict(False, {"tone": False}, issues=[said])
    # shadows: the issue goes with the shadow key
    _, by_key = split_verdict(unmet, [], ["tone"])
    assert by_key == {"tone": (said,)}
    # samples: the key failed, and the judge's own words say why (not a vote count)
    sampled = combine([tone], unmet, [unmet], requests=2)
    assert sampled.issues == [said]
    # a jury: the members that voted "not met" say why in their own words
    jury = jury_verdict([tone], {"a": unmet, "b": unmet}, {}, policy="majority", on="all", quorum=2)
    assert jury.issues == [said]


def test_an_issue_about_another_key_is_not_taken_for_this_one(reg: Registry) -> None:
    tone = hybrid_rubric(reg)["tone"]
    unmet = verdict(False, {"tone": False}, issues=['"tones" are mixed'])
    sampled = combine([tone], unmet, [unmet], requests=2)
    assert sampled.issues == ['"tones" are mixed', "tone: not met in 2 of 2 samples"]
