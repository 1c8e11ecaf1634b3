"""Jury: votes by the members that answered, ties and too few answers failing closed
with the reason, abstaining members named, on="doubtful", agreement. Plain fakes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Criterion, agrade, grade, grade_many, run_loop
from gradeloop.errors import JudgeError
from gradeloop.judging import Jury, JuryVerdict, compare_drafts
from gradeloop.judging._votes import decide_key
from tests.support.fakes import FakeGenerator
from tests.support.judging_fakes import (
    AsyncVoter,
    Malformed,
    PositionBiased,
    Prefers,
    Raising,
    Voter,
)

RUBRIC = {
    "criteria": [
        {"key": "cited", "description": "Cites the spec."},
        {"key": "clear", "description": "Clear.", "scale": "score", "threshold": 7},
        {
            "key": "brief",
            "description": "Brief.",
            "checker": "length",
            "options": {"max_words": 50},
        },
    ]
}
CITED = Criterion(key="cited", description="Cites the spec.")
CLEAR = Criterion(key="clear", description="Clear.", scale="score", threshold=7)


def voter(cited: bool, clear: float, model: str) -> Voter:
    return Voter({"cited": cited}, {"clear": clear}, model=model)


def test_a_key_is_met_by_a_majority_of_the_judges_and_each_vote_is_recorded() -> None:
    jury = Jury([voter(True, 8, "a"), voter(True, 6, "b"), voter(False, 9, "c")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert ev["cited"].passed and ev["clear"].passed
    assert ev["cited"].agreement == pytest.approx(2 / 3)
    assert ev["cited"].samples == (True, True, False)
    assert ev["cited"].judging is not None
    votes = ev["cited"].judging["jury"]["votes"]
    assert votes == {"a": True, "b": True, "c": False}
    assert ev["clear"].score == 8.0  # the median of the scores that met: 8 and 9
    assert ev.accepted
    assert ev.to_json()["criteria"][0]["judging"]["jury"]["policy"] == "majority"


def test_the_majority_policy_fails_a_scored_key_most_judges_fail() -> None:
    jury = Jury([voter(True, 9, "a"), voter(True, 5, "b"), voter(True, 6, "c")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert not ev["clear"].passed and ev["clear"].score == 5.0  # median of 5 and 6, down
    assert not ev.accepted


def test_the_median_policy_takes_the_median_score() -> None:
    members = [voter(True, 9, "a"), voter(True, 6, "b"), voter(True, 8, "c")]
    ev = grade("draft", RUBRIC, judge=Jury(members, policy="median"))
    assert ev["clear"].passed and ev["clear"].score == 8.0
    four = [*members, voter(True, 5, "d")]
    # the median of 5, 6, 8, 9 is 7, but it lies between a fail (6) and a pass (8):
    # half the judges reached 7, a split, which fails closed as a tie does
    split = grade("draft", RUBRIC, judge=Jury(four, policy="median"))["clear"]
    assert not split.passed and split.score == 5.0  # the median of the failing side, down
    assert not grade("draft", RUBRIC, judge=Jury(four))["clear"].passed  # majority: a tie


@pytest.mark.parametrize(
    ("scores", "abstains"),
    [([10, 10, 4, 4], False), ([10, 4], True)],
    ids=["2-2 split", "1-1 and an abstention"],
)
def test_a_median_resting_on_a_split_fails_closed(scores: list[int], abstains: bool) -> None:
    members: list[Any] = [voter(True, s, f"j{i}") for i, s in enumerate(scores)]
    if abstains:
        members.append(Raising(model="gone"))
    ev = grade("draft", RUBRIC, judge=Jury(members, policy="median", quorum=len(scores)))
    assert not ev["clear"].passed and not ev.accepted
    assert any("falls between a pass and a fail" in i for i in ev.issues)
    assert ev["clear"].score is not None and ev["clear"].score < 7


@pytest.mark.parametrize("scores", [[10, 10, 8, 4], [10, 8], [9, 4, 8]])
def test_a_median_with_both_middles_passing_is_met(scores: list[int]) -> None:
    members = [voter(True, s, f"j{i}") for i, s in enumerate(scores)]
    ev = grade("draft", RUBRIC, judge=Jury(members, policy="median"))
    assert ev["clear"].passed and ev.accepted


def test_a_tie_fails_closed_with_the_reason() -> None:
    jury = Jury([voter(True, 8, "a"), voter(False, 8, "b")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert not ev["cited"].passed
    assert any("cited: the jury tied: 1 of 2 judges say met" in i for i in ev.issues)
    assert ev["cited"].judging["jury"]["note"].startswith("the jury tied")  # type: ignore[index]
    both = Jury([voter(True, 8, "a"), voter(True, 8, "b")])
    assert grade("draft", RUBRIC, judge=both).accepted  # the passing twin


def test_a_raising_member_abstains_and_is_named() -> None:
    jury = Jury([voter(True, 8, "a"), Raising("down"), voter(True, 9, "c")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert ev.accepted
    jury_record = ev["cited"].judging["jury"]  # type: ignore[index]
    assert "down" in jury_record["abstained"]
    assert "connection refused" in jury_record["abstained"]["down"]
    assert jury_record["votes"] == {"a": True, "c": True}


def test_a_malformed_member_abstains_as_invalid() -> None:
    jury = Jury([voter(True, 8, "a"), Malformed("sloppy"), voter(True, 9, "c")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert ev.accepted
    reason = ev["cited"].judging["jury"]["abstained"]["sloppy"]  # type: ignore[index]
    assert reason.startswith("invalid:") and "criteria_met.cited" in reason


def test_too_few_answers_raise_with_every_members_failure() -> None:
    jury = Jury([voter(True, 8, "a"), Raising("down"), Malformed("sloppy")])
    with pytest.raises(JudgeError, match="1 of 3 judges answered, the quorum is 2") as info:
        grade("draft", RUBRIC, judge=jury)
    assert info.value.reason == "no_quorum"
    assert "down abstained (api_error" in str(info.value)
    assert "sloppy abstained (invalid" in str(info.value)
    lenient = Jury([voter(True, 8, "a"), Raising("down"), Malformed("sloppy")], quorum=1)
    assert grade("draft", RUBRIC, judge=lenient).accepted  # the passing twin


def test_a_key_with_too_few_votes_fails_closed_with_the_reason() -> None:
    # "b" leaves "cited" out of its verdict: one vote for that key, quorum 2
    jury = Jury([voter(True, 8, "a"), Voter({}, {"clear": 9}, model="b")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert ev["clear"].passed
    assert not ev["cited"].passed
    assert any("cited: too few judges answered (1; the quorum is 2)" in i for i in ev.issues)


def test_a_scored_key_short_of_its_quorum_is_not_met_whatever_its_one_score() -> None:
    jury = Jury([voter(True, 9, "a"), Voter({"cited": True}, {}, model="b")])
    ev = grade("draft", RUBRIC, judge=jury)
    assert ev["cited"].passed and not ev["clear"].passed
    assert any("clear: too few judges answered (1; the quorum is 2)" in i for i in ev.issues)
    assert ev["clear"].judging["jury"]["votes"] == {"a": 9.0}  # type: ignore[index]


def test_on_doubtful_asks_the_others_only_about_doubtful_keys() -> None:
    first = voter(True, 9, "first")  # clear 9, threshold 7, margin 1: confident
    others = [voter(True, 9, "b"), voter(True, 9, "c")]
    ev = grade("draft", RUBRIC, judge=Jury([first, *others], on="doubtful"))
    assert ev.accepted and all(o.asked == [] for o in others)  # one request in all
    assert ev["cited"].judging["jury"]["votes"] == {"first": True}  # type: ignore[index]

    unsure = voter(False, 8, "first")  # cited failed, clear within 1 of 7: both doubtful
    others = [voter(True, 9, "b"), voter(True, 6, "c")]
    ev = grade("draft", RUBRIC, judge=Jury([unsure, *others], on="doubtful"))
    assert [o.asked[0]["keys"] for o in others] == [["cited", "clear"], ["cited", "clear"]]
    assert ev["cited"].passed  # 2 of 3 say met
    assert ev["clear"].passed  # 8, 9 met; 6 not: 2 of 3

    partly = voter(True, 7, "first")  # only clear is doubtful
    others = [voter(False, 9, "b"), voter(False, 9, "c")]
    ev = grade("draft", RUBRIC, judge=Jury([partly, *others], on="doubtful"))
    assert [o.asked[0]["keys"] for o in others] == [["clear"], ["clear"]]
    assert ev["cited"].passed  # decided by the first judge: the others never saw it


def test_on_doubtful_asks_everyone_when_the_first_judge_fails() -> None:
    others = [voter(True, 9, "b"), voter(True, 9, "c")]
    ev = grade("draft", RUBRIC, judge=Jury([Raising("first"), *others], on="doubtful"))
    assert ev.accepted
    assert [o.asked[0]["keys"] for o in others] == [["cited", "clear"], ["cited", "clear"]]


def test_members_self_agreement_sits_beside_the_jurys_agreement() -> None:
    from gradeloop.grading._samples import KeySamples, SampledVerdict

    class Sampled(Voter):
        def evaluate(self, task: str, draft: str, criteria: Any) -> SampledVerdict:
            v = super().evaluate(task, draft, criteria)
            s = {"cited": KeySamples(values=(True, True, False), agreement=2 / 3)}
            return SampledVerdict(**v.model_dump(), samples=s, requests=3)

    jury = Jury([Sampled({"cited": True}, {"clear": 8}, model="s"), voter(True, 8, "b")])
    ev = grade("draft", RUBRIC, judge=jury)
    record = ev["cited"].judging["jury"]  # type: ignore[index]
    assert record["self_agreement"] == {"s": pytest.approx(0.6667)}
    assert ev["cited"].agreement == 1.0  # both judges said met


def test_the_async_path_awaits_members_and_decides_the_same() -> None:
    members = [AsyncVoter({"cited": True}, {"clear": 8}, model=m) for m in "ab"]
    jury = Jury([*members, Raising("down")])
    ev = asyncio.run(agrade("draft", RUBRIC, judge=jury))
    assert ev.accepted and [m.awaited for m in members] == [1, 1]
    assert "down" in ev["cited"].judging["jury"]["abstained"]  # type: ignore[index]
    doubt = Jury([AsyncVoter({"cited": False}, {"clear": 9}, model="x"), *members], on="doubtful")
    ev = asyncio.run(agrade("draft", RUBRIC, judge=doubt))
    assert ev["cited"].passed and members[0].asked[-1]["keys"] == ["cited"]
    with pytest.raises(JudgeError, match="quorum"):
        asyncio.run(agrade("draft", RUBRIC, judge=Jury([Raising("x"), Raising("y"), members[0]])))


def test_a_jury_grades_many_drafts_and_runs_a_loop() -> None:
    jury = Jury([voter(True, 8, "a"), voter(True, 8, "b"), Raising("down")])
    evaluations = grade_many(["one", "two", "three"], RUBRIC, judge=jury, concurrency=2)
    assert [e.accepted for e in evaluations] == [True, True, True]
    result = run_loop("write", RUBRIC, generator=FakeGenerator(), judge=jury, max_rounds=2)
    assert result.passed and result.stop_reason == "passed"


def test_a_jury_compares_drafts_by_majority() -> None:
    jury = Jury([Prefers("GOOD", model="a"), Prefers("GOOD", model="b"), PositionBiased()])
    pref = compare_drafts("plain", "GOOD one", RUBRIC, judge=jury)
    assert pref.by_key["cited"] == "b" and pref.consistent["cited"]
    split = Jury([PositionBiased("first", model="f"), PositionBiased("second", model="s")])
    pref = compare_drafts("plain", "GOOD one", RUBRIC, judge=split)
    assert pref.orders["cited"] == ("tie", "tie")  # one each way: no majority
    assert pref.by_key["cited"] == "tie" and pref.consistent["cited"]
    down = Jury([Prefers("GOOD"), Raising("x"), Raising("y")])
    with pytest.raises(JudgeError, match="1 of 3 judges answered"):
        compare_drafts("plain", "GOOD one", RUBRIC, judge=down)


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"policy": "mean"}, "policy"),
        ({"on": "some"}, "on must be"),
        ({"quorum": 0}, "quorum must be an integer from 1 to 2"),
        ({"quorum": 3}, "quorum"),
        ({"quorum": True}, "quorum"),
        ({"names": ["x", "x"]}, "own name"),
        ({"margin": -1}, "margin"),
    ],
)
def test_bad_jury_settings_are_errors(kwargs: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        Jury([Voter(), Voter()], **kwargs)


def test_members_are_named_and_told_apart() -> None:
    jury = Jury([Voter(model="m"), Voter(model="m"), Voter(model="other")])
    assert jury.names == ("m", "m#2", "other") and jury.quorum == 2
    assert jury.model == "jury(m, m#2, other)"
    with pytest.raises(TypeError, match="not a judge"):
        Jury([object()])
    with pytest.raises(ValueError, match="at least one"):
        Jury([])


# -- the decision rule as a property --------------------------------------------------------

VOTES = st.lists(st.booleans(), min_size=0, max_size=9)


@given(VOTES, st.integers(1, 9))
def test_a_pass_fail_key_is_met_only_by_a_strict_majority_within_quorum(
    votes: list[bool], quorum: int
) -> None:
    d = decide_key(CITED, votes, "majority", quorum)
    yes = sum(votes)
    assert d.met == (yes * 2 > len(votes) and len(votes) >= quorum)
    if votes and yes * 2 == len(votes) and len(votes) >= quorum:
        assert d.note is not None and "tied" in d.note  # a tie says so
    if len(votes) < quorum:
        assert d.note is not None and not d.met  # too few answers say so
    if d.met:
        assert d.note is None


@given(
    st.lists(st.integers(1, 10), min_size=1, max_size=9), st.sampled_from(["majority", "median"])
)
def test_a_scored_keys_score_agrees_with_its_decision(scores: list[int], policy: Any) -> None:
    d = decide_key(CLEAR, [float(s) for s in scores], policy, 1)
    assert d.score is not None
    assert d.met == (d.score >= 7)
    assert 0 < d.agreement <= 1


def test_jury_verdict_is_a_verdict_the_strict_reader_keeps() -> None:
    jury = Jury([voter(True, 8, "a")])
    v = jury.evaluate("t", "d", [CITED, CLEAR])
    assert isinstance(v, JuryVerdict) and v.votes["cited"] == {"a": True}


def test_grade_many_gives_the_members_that_take_one_the_runs_cache(tmp_path: Any) -> None:
    from gradeloop import JudgeCache

    seen: list[Any] = []

    class Caching(Voter):
        cache: Any = None

        def evaluate(self, task: str, draft: str, criteria: Any) -> Any:
            seen.append(self.cache)
            return super().evaluate(task, draft, criteria)

    member = Caching({"cited": True}, {"clear": 8}, model="c")
    jury = Jury([member, voter(True, 8, "plain")])
    with JudgeCache(tmp_path / "c.db") as cache:
        assert grade_many(["d"], RUBRIC, judge=jury, cache=cache)[0].accepted
        assert seen == [cache]
    assert member.cache is None and jury.cache is None  # the caller's objects unchanged


def test_decide_gives_what_evaluate_gives_from_the_same_answers() -> None:
    members = [voter(True, 8, "a"), voter(False, 9, "b"), Raising(model="c")]
    jury = Jury(members)
    criteria = [CITED, CLEAR]
    want = jury.evaluate("t", "draft", criteria)
    outcomes: list[Any] = [members[0].evaluate("t", "draft", criteria),
                           members[1].evaluate("t", "draft", criteria),
                           JudgeError("it broke", reason="api_error")]  # fmt: skip
    got = jury.decide(criteria, outcomes)
    assert isinstance(want, JuryVerdict) and isinstance(got, JuryVerdict)
    assert (got.criteria_met, got.scores, got.votes, got.notes) == (
        want.criteria_met,
        want.scores,
        want.votes,
        want.notes,
    )
    assert set(got.abstained) == {"c"} and got.abstained["c"] == "api_error: it broke"
    assert got.requested_on is None and got.on == "all"


def test_decide_reads_each_answer_strictly_and_counts_one_per_judge() -> None:
    jury = Jury([voter(True, 8, "a"), voter(True, 8, "b"), voter(True, 8, "c")], on="doubtful")
    good = jury.judges[0].evaluate("t", "d", [CITED, CLEAR])
    bad = good.model_copy(update={"scores": {"clear": 11.0}})  # outside 0-10
    verdict = jury.decide([CITED, CLEAR], [good, good, bad])
    assert verdict.abstained["c"].startswith("invalid: ")  # it abstains, never votes
    assert verdict.votes["clear"] == {"a": 8.0, "b": 8.0}
    assert verdict.on == "all" and verdict.requested_on == "doubtful"  # asked every key
    assert verdict.key_detail("clear")["jury"]["requested_on"] == "doubtful"  # type: ignore[index]
    assert jury.decide([CITED, CLEAR], [good, good, good]).abstained == {}  # the passing twin
    with pytest.raises(ValueError, match="one outcome per judge: 3 judges, 2 outcomes"):
        jury.decide([CITED, CLEAR], [good, good])
    with pytest.raises(JudgeError, match="too few answers: 1 of 3"):
        jury.decide([CITED, CLEAR], [good, bad, bad])


# -- one flow, two drivers: evaluate and aevaluate decide alike ---------------------------

PARITY: dict[str, tuple[Any, dict[str, Any]]] = {
    "majority": (lambda: [voter(True, 8, "a"), voter(True, 6, "b"), voter(False, 9, "c")], {}),
    "median": (lambda: [voter(True, 9, "a"), voter(True, 6, "b"), voter(True, 8, "c")],
               {"policy": "median"}),
    "a tie fails closed": (lambda: [voter(True, 8, "a"), voter(False, 8, "b")], {}),
    "a raising member abstains": (lambda: [voter(True, 8, "a"), Raising("down"),
                                           voter(True, 9, "c")], {}),
    "a malformed member abstains": (lambda: [voter(True, 8, "a"), Malformed("sloppy"),
                                             voter(True, 9, "c")], {}),
    "a key short of its quorum": (lambda: [voter(True, 8, "a"), Voter({}, {"clear": 9},
                                                                      model="b")], {}),
    "too few answers": (lambda: [voter(True, 8, "a"), Raising("down"), Malformed("s")], {}),
    "a lenient quorum": (lambda: [voter(True, 8, "a"), Raising("down"), Malformed("s")],
                         {"quorum": 1}),
    "doubtful, the first sure": (lambda: [voter(True, 9, "f"), voter(False, 2, "b"),
                                          voter(False, 2, "c")], {"on": "doubtful"}),
    "doubtful, both keys": (lambda: [voter(False, 8, "f"), voter(True, 9, "b"),
                                     voter(True, 6, "c")], {"on": "doubtful"}),
    "doubtful, one key": (lambda: [voter(True, 7, "f"), voter(False, 9, "b"),
                                   voter(False, 9, "c")], {"on": "doubtful"}),
    "doubtful, the first fails": (lambda: [Raising("f"), voter(True, 9, "b"),
                                           voter(False, 9, "c")], {"on": "doubtful"}),
    "doubtful, the first and the rest fail": (lambda: [Raising("f"), Raising("b"),
                                                       voter(True, 9, "c")], {"on": "doubtful"}),
    "doubtful, a tie among the rest": (lambda: [voter(False, 9, "f"), voter(True, 9, "b"),
                                                voter(False, 9, "c"), Raising("d")],
                                       {"on": "doubtful"}),
    "doubtful, the rest abstain": (lambda: [voter(True, 7, "f"), Raising("b"), Raising("c")],
                                   {"on": "doubtful"}),
}  # fmt: skip


def outcome(jury: Jury, driver: str) -> tuple[Any, ...]:
    """What the jury decided through one driver, and what each member was asked."""
    try:
        if driver == "sync":
            verdict: Any = jury.evaluate("t", "draft", [CITED, CLEAR])
        else:
            verdict = asyncio.run(jury.aevaluate("t", "draft", [CITED, CLEAR]))
        decided: Any = verdict.model_dump()
    except JudgeError as exc:
        decided = (exc.reason, str(exc))
    return decided, [[a["keys"] for a in j.asked] for j in jury.judges]


@pytest.mark.parametrize("name", list(PARITY))
def test_evaluate_and_aevaluate_decide_every_scenario_alike(name: str) -> None:
    members, kw = PARITY[name]
    sync = outcome(Jury(members(), **kw), "sync")
    awaited = outcome(Jury(members(), **kw), "async")
    assert sync == awaited
    asked = sync[1]
    if kw.get("on") == "doubtful" and "sure" in name:
        assert asked[1:] == [[], []]  # a clear pass costs one request, on both drivers


def test_the_parity_check_sees_a_driver_that_decides_differently() -> None:
    jury = Jury([voter(True, 8, "a"), voter(False, 8, "b"), voter(True, 8, "c")])
    two = Jury([voter(True, 8, "a"), voter(False, 8, "b")])
    assert outcome(jury, "sync") != outcome(two, "async")  # a majority against a tie
