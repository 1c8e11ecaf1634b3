"""The hostile-reply suite: generated judge replies through the real judge, and custom judges.

Property (see tests/support/hostile.py for the oracle): grade() accepts a draft only when
the reply it read validly marks every judge key met and every scored key's integer
score in 1-10 reaches its threshold, with ``passed`` true. It is checked both ways:
a valid reply gives a verdict (accepted exactly when it is all-met), an invalid
one a judge failure, in native, json and auto modes, through a client's parsed
object, and through custom judges returning dicts, Verdicts or anything else.

``GRADELOOP_HOSTILE_EXAMPLES=5000`` runs a larger sample locally;
``benchmarks/audit_gate.py`` counts instead of stopping at the first failure.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import hostile

SETTINGS = settings(
    max_examples=hostile.examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("mode", ["native", "json", "auto"])
@SETTINGS
@given(data=st.data())
def test_the_judge_accepts_only_a_valid_all_met_reply(mode: str, data: st.DataObject) -> None:
    criteria = data.draw(hostile.criteria_sets(), label="criteria")
    script = [data.draw(hostile.replies(criteria), label=f"reply {i + 1}") for i in range(3)]
    out = hostile.through_anthropic_judge(criteria, script, mode)
    assert hostile.judge_violations(criteria, script, mode, out) == []


@SETTINGS
@given(data=st.data())
def test_a_custom_judge_is_held_to_the_same_rules(data: st.DataObject) -> None:
    criteria = data.draw(hostile.criteria_sets(), label="criteria")
    kind, value = data.draw(hostile.custom_answers(criteria), label="answer")
    out = hostile.through_custom_judge(criteria, kind, value)
    assert hostile.custom_violations(criteria, kind, value, out) == []


# -- the oracle itself: it must be able to say both things ------------------------------------


def test_the_oracle_reads_a_good_reply_and_rejects_each_kind_of_hostile_one() -> None:
    from gradeloop import Criterion

    c = (Criterion(key="a", description="a"), Criterion(key="s", description="s", scale="score"))
    base = hostile.Obj(
        (
            ("reasoning", "r"),
            ("scores", hostile.Obj((("s", 8),))),
            ("criteria_met", hostile.Obj((("a", True),))),
            ("passed", True),
            ("issues", []),
        )
    )
    assert hostile.meaning_of_text_doc(base, c) == "good"
    assert hostile.meaning_of_text_doc(base.set("passed", False), c) == "valid"
    met = base.get("criteria_met")
    assert hostile.meaning_of_text_doc(base.set("criteria_met", met.add("a", True)), c) == (
        "invalid"
    )
    for score in (11, 0, 7.5, "8", True, hostile.Huge(), float("nan")):
        doc = base.set("scores", hostile.Obj((("s", score),)))
        assert hostile.meaning_of_text_doc(doc, c) == "invalid", score
    assert hostile.meaning_of_text_doc(base.set("scores", hostile.Obj((("s", 8.0),))), c) == "good"
    assert hostile.meaning_of_text_doc(base.set("junk", hostile.Deep(20)), c) == "good"
    assert hostile.meaning_of_text_doc(base.set("junk", hostile.Huge()), c) == "invalid"
    assert hostile.meaning_of_text_doc(base.set("junk", hostile.Deep(hostile.TOO_DEEP)), c) == (
        "invalid"
    )
    assert hostile.meaning_of_python({**hostile.to_python(base), "passed": "true"}, c) == (
        "invalid"
    )
