from __future__ import annotations

import pytest
from pydantic import ValidationError

from gradeloop import Verdict, accepted, as_feedback

KEYS = ("api_cited", "code_runs", "errors_named", "sentence_len", "no_invention")


def verdict(passed: bool, met: dict[str, bool]) -> Verdict:
    return Verdict(reasoning="cited 4.2", criteria_met=met, passed=passed, issues=[])


def test_field_order_is_the_seeds_then_the_optional_ones() -> None:
    assert list(Verdict.model_fields) == [
        "reasoning",
        "criteria_met",
        "passed",
        "issues",
        "scores",
        "feedback",
    ]
    v = verdict(True, {})
    assert v.scores == {} and v.feedback == {}


def test_empty_criteria_met_with_passed_true_is_not_accepted() -> None:
    assert accepted(verdict(True, {}), KEYS) is False


def test_one_key_of_five_is_not_accepted() -> None:
    assert accepted(verdict(True, {"api_cited": True}), KEYS) is False


def test_one_false_value_is_not_accepted() -> None:
    met = dict.fromkeys(KEYS, True) | {"no_invention": False}
    assert accepted(verdict(True, met), KEYS) is False


def test_passed_false_with_every_key_met_is_not_accepted() -> None:
    assert accepted(verdict(False, dict.fromkeys(KEYS, True)), KEYS) is False


def test_a_real_pass_is_accepted() -> None:
    # the twin: without it, a gate of `return False` passes every test above
    assert accepted(verdict(True, dict.fromkeys(KEYS, True)), KEYS) is True


def test_an_extra_false_key_outside_the_keys_still_fails() -> None:
    met = dict.fromkeys(KEYS, True) | {"extra": False}
    assert accepted(verdict(True, met), KEYS) is False


def test_as_feedback_renders_bullets_never_a_list_repr() -> None:
    text = as_feedback(["add caveats", "cite section"])
    assert text == "- add caveats\n- cite section"
    assert "['" not in text


def test_as_feedback_of_nothing_is_an_empty_string() -> None:
    assert as_feedback([]) == ""
    assert as_feedback(None) == ""


def test_verdict_rejects_unknown_fields_and_wrong_types() -> None:
    with pytest.raises(ValidationError):
        Verdict.model_validate(
            {"reasoning": "", "criteria_met": {}, "passed": True, "issues": [], "is_valid": True}
        )
    with pytest.raises(ValidationError):
        Verdict.model_validate(
            {"reasoning": "", "criteria_met": {"a": "maybe"}, "passed": True, "issues": []}
        )
