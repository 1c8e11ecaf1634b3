"""Reward shapes and their ranges; what a judge outage and a failing code key give."""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Rubric, grade
from gradeloop.errors import RubricError
from gradeloop.grading._rubric_fields import REWARD_SHAPES
from gradeloop.rewards import trl_reward
from gradeloop.rewards._shapes import RewardShape, Shape, key_reward, resolve_shape
from tests.rewards.fakes import RUBRIC, WordJudge


def _ev(draft: str):  # type: ignore[no-untyped-def]
    return grade(draft, RUBRIC, judge=WordJudge())


def test_the_shapes_are_the_rubric_checks_list() -> None:
    assert get_args(Shape) == REWARD_SHAPES


@pytest.mark.parametrize(
    ("shape", "signed", "draft", "want"),
    [
        ("score", False, "hello there", 1.0),  # both keys met
        ("score", False, "you rude person", 0.5),  # the judge key not met: half the weight
        ("score", False, "one two three four five six rude", 0.0),
        ("gate", False, "hello there", 1.0),
        ("gate", False, "you rude person", 0.0),
        ("gate_score", False, "hello there", 1.0),
        ("gate_score", False, "you rude person", 0.0),  # not accepted: 0 whatever the score
        ("score", True, "hello there", 1.0),
        ("score", True, "you rude person", 0.0),  # 0.5 on [0, 1] is 0 on [-1, 1]
        ("gate", True, "you rude person", -1.0),
    ],
)
def test_each_shape_reads_the_grade(shape: Shape, signed: bool, draft: str, want: float) -> None:
    assert RewardShape(shape, signed).of(_ev(draft)) == pytest.approx(want)


def test_gate_score_is_the_score_when_accepted() -> None:
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "tone", "description": "Tone.", "scale": "score", "threshold": 5}]}
    )
    ev = grade("fine", rubric, judge=WordJudge())  # scored 9: met
    assert ev.accepted
    assert RewardShape("gate_score").of(ev) == pytest.approx(0.9)
    assert RewardShape("gate").of(ev) == 1.0


def test_a_judge_that_could_not_answer_gives_none_never_zero() -> None:
    reward = trl_reward(RUBRIC, judge=WordJudge())
    out = reward(prompts=["p", "p"], completions=["please fail here", "hello"])
    assert out[0] is None and out[1] == 1.0
    per_key = {f.key: f(prompts=["p"], completions=["please fail here"]) for f in reward.per_key()}
    assert per_key == {"short": [1.0], "polite": [None]}  # the code key still rewards


def test_a_code_key_that_fails_is_a_real_zero() -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {"key": "valid", "description": "JSON.", "checker": "json_valid"},
                {"key": "polite", "description": "Polite."},
            ]
        }
    )
    reward = trl_reward(rubric, judge=WordJudge())
    assert reward(prompts=["p"], completions=["not json"]) == [0.5]
    valid = reward.per_key()[0]
    assert valid(prompts=["p"], completions=["not json"]) == [0.0]


def test_a_key_reward_is_its_score_over_ten() -> None:
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "tone", "description": "Tone.", "scale": "score"}]}
    )
    ev = grade("so rude", rubric, judge=WordJudge())  # scored 2
    assert key_reward(ev, "tone", RewardShape()) == pytest.approx(0.2)
    assert key_reward(ev, "tone", RewardShape(signed=True)) == pytest.approx(-0.6)


def test_the_rubric_chooses_the_shape_unless_the_call_does() -> None:
    table = {**RUBRIC.to_dict(), "reward": {"shape": "gate", "signed": True}}
    rubric = Rubric.from_dict(table)
    assert rubric.to_dict()["reward"] == {"shape": "gate", "signed": True}
    assert resolve_shape(rubric, None, None) == RewardShape("gate", True)
    assert resolve_shape(rubric, "score", None) == RewardShape("score", True)
    assert resolve_shape(rubric, None, False) == RewardShape("gate", False)
    assert resolve_shape(RUBRIC, None, None) == RewardShape("score", False)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"shape": "gates"}, "reward.shape must be one of score, gate, gate_score"),
        ({"signed": "yes"}, "reward.signed is true"),
        ({"shpe": "gate"}, "shpe"),
        ("gate", "'reward' is a table"),
    ],
)
def test_a_bad_reward_table_fails_when_the_rubric_loads(table: object, message: str) -> None:
    with pytest.raises(RubricError, match=message):
        Rubric.from_dict({**RUBRIC.to_dict(), "reward": table})


def test_a_bad_shape_in_the_call_names_the_argument() -> None:
    with pytest.raises(ValueError, match="shape must be one of 'score', 'gate', 'gate_score'"):
        trl_reward(RUBRIC, judge=WordJudge(), shape="accuracy")
    with pytest.raises(ValueError, match="signed must be True or False"):
        trl_reward(RUBRIC, judge=WordJudge(), signed="yes")  # type: ignore[arg-type]


@given(
    st.lists(st.sampled_from(["alpha", "beta", "gamma", "x"]), max_size=6),
    st.lists(st.floats(0, 5), min_size=3, max_size=3).filter(lambda w: sum(w) > 0),
    st.booleans(),
)
def test_every_shape_stays_in_its_range(
    words: list[str], weights: list[float], signed: bool
) -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": k,
                    "description": k,
                    "checker": "contains",
                    "options": {"values": [k]},
                    "weight": w,
                }
                for k, w in zip(("alpha", "beta", "gamma"), weights, strict=True)
            ]
        }
    )
    ev = grade(" ".join(words), rubric)
    low = -1.0 if signed else 0.0
    score, gate, both = (RewardShape(s, signed).of(ev) for s in ("score", "gate", "gate_score"))
    assert score is not None and gate is not None and both is not None
    assert low <= score <= 1.0 and gate in (low, 1.0)
    assert both == (score if ev.accepted else low)
